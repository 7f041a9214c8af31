// Package keyfile holds what the binary's secret and key files share: an
// open that refuses anything but a regular file without blocking on a
// FIFO, the owner check, hex key files read and created 0600, and the
// path helpers their checks use. The rules that differ per file (which
// setting names it, its size and content) stay with each caller; the one
// rule for a file's mode is the settings package's (a loose file is a
// warning or a refusal that names the setting).
package keyfile
