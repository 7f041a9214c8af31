package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmStartTool declares the vm_start tool.
func vmStartTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolVMStart,
		Title: "Start a stopped guest",
		Description: "Start one stopped VM or container. " +
			"Refused (nothing is done) when the operator protects the guest (by VMID, name, tag or pool), when it is already running or paused, locked, or a template, or when a task runs for it. " +
			responderApproval + " " +
			"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the guest runs.",
		Class:       proxmoxsafe.ClassResponder,
		Annotations: startAnnotations,
	}, ops(proxmoxsafe.OpStartGuest), (*proxmoxsafe.Client).StartGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("start", r)
	})
}
