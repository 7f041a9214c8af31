package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmResetTool declares the vm_reset tool.
func vmResetTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolVMReset,
		Title: "Hard-reset a hung VM",
		Description: "Last resort for a hung QEMU VM: reset it at once, like pressing its reset button (unsaved data in the guest may be lost). Containers have no reset. " +
			"First pings the VM's guest agent: refused (nothing is done) when the agent answers (the guest is alive: use vm_reboot), when no agent is configured (nobody can tell a hung guest from a busy one) unless the operator allows it, when the guest is protected, up for less than the minimum uptime, stopped, paused, locked or a template, or when a task runs for it. " +
			responderApproval + " " +
			"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the VM runs again with a fresh uptime.",
		Class:       proxmoxsafe.ClassResponder,
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpResetGuest), (*proxmoxsafe.Client).ResetGuest, func(_ proxmoxsafe.ResetGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("reset", r)
	})
}
