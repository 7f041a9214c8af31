// Package settings is the binary's configuration: the one table of every
// flag and environment variable (with its help line, its reference text for
// docs/CONFIGURATION.md, its default and its parser), the aliases other
// Proxmox MCP servers use, and the checks that make bad configuration fail
// at startup with one line naming the variable to fix. Booleans parse
// strictly (true, false, 1, 0). Nothing here talks to Proxmox: Parse reads
// the secret and key files it names, nothing else.
//
// It sits above the library (it imports proxmoxsafe, mcphttp and
// approvalweb for their defaults and validators); only the command and
// internal/docgen import it.
package settings
