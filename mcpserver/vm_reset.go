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
		does:   "Last resort for a hung QEMU VM: reset it at once, like pressing its reset button (unsaved data in the guest may be lost). Containers have no reset. It first pings the VM's guest agent.",
		unless: "the agent does not answer (an answering guest is alive: use vm_reboot), an agent is configured (nobody can tell a hung guest from a busy one; the operator may allow a VM without one), the VM has been up for at least the minimum uptime, is running (not stopped or paused), not locked, not a template and no task runs for it",
		waits:  "then until the VM runs again with a fresh uptime",
	})
}
