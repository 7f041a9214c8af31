package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmRebootTool declares the vm_reboot tool.
func vmRebootTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolVMReboot,
		Title: "Reboot a guest (guarded)",
		Description: "Reboot one running VM or container cleanly (the guest OS shuts down and starts again). " +
			"Refused (nothing is done) when the operator protects the guest, when it has been up for less than the operator's minimum uptime (default 1 hour: no reboot loops), when it is stopped, paused, locked or a template, or when a task runs for it. " +
			responderApproval + " " +
			"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the guest runs again with a fresh uptime.",
		Class:       proxmoxsafe.ClassResponder,
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpRebootGuest), (*proxmoxsafe.Client).RebootGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("reboot", r)
	})
}
