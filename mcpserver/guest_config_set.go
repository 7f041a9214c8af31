package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guestConfigSetTool declares the guest_config_set tool.
func guestConfigSetTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestConfigSet,
		Title:       "Set guest config",
		Annotations: configSetAnnotations,
	}, ops(proxmoxsafe.OpSetGuestConfig), (*proxmoxsafe.Client).SetGuestConfig, func(_ proxmoxsafe.SetGuestConfigInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("config change ("+changesText(r.Changes)+")", r)
	}).describedBy(mutationWords{
		does: "Set or delete config keys of one guest, only those the operator allows (by default cores, sockets, memory, balloon, name, description, tags, onboot, hostname, swap); never devices, mounts, hooks or secrets. Values are strings (memory in MiB, booleans 0/1).",
	}).returning("changes", "synchronous", "outcome.pending")
}

// configSetAnnotations: setting config overwrites or deletes values (a
// destructive update in MCP's sense); growing a disk loses nothing, but
// cannot be undone either, so neither is idempotent.
var configSetAnnotations = mcp.ToolAnnotations{
	ReadOnlyHint:    false,
	IdempotentHint:  false,
	DestructiveHint: ptr(true),
	OpenWorldHint:   ptr(false),
}
