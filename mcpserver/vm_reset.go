package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmResetTool declares the vm_reset tool.
func vmResetTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolVMReset,
		Title:       "Hard-reset a hung VM",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpResetGuest), (*proxmoxsafe.Client).ResetGuest, func(_ proxmoxsafe.ResetGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("reset", r)
	}).describedBy(mutationWords{
		does:   "Hard-reset a hung QEMU VM, a last resort (unsaved data may be lost).",
		unless: "its configured guest agent does not answer a ping (if it does, use vm_reboot) and it was up the minimum uptime",
	}).returning("outcome.after", "outcome.uptime")
}
