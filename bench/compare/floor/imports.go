//go:build floorimports

package main

// Built with -tags floorimports, the floor also imports every package
// ./cmd/proxmox-safe-mcp imports that the floor does not link already,
// and uses none of them: their code is linked as far as their package
// initialization reaches, and that initialization runs at start. Between
// floor and ours it splits the difference in two: what this project's
// packages cost by being in the binary (floor-imports / floor), and what
// ours does at start with them (ours / floor-imports): configuration, the
// audit log, the client, the tools registered and listed, signal
// handling. TestFloorImportsMatchCommand keeps the list to the command's.

import (
	_ "flag"
	_ "log/syslog"
	_ "os/signal"
	_ "os/user"
	_ "runtime/debug"
	_ "text/tabwriter"

	_ "github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/demo"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/promtext"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/internal/toolcard"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/mcpstdio"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	_ "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)
