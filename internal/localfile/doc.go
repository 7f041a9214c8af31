// Package localfile holds what the library's local state files share:
// exclusive non-blocking locks (flock where the platform has it), the
// check that a state file or directory is private to this user, and an
// open that refuses anything but a regular file.
package localfile
