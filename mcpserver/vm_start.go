package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmStartTool declares the vm_start tool.
func vmStartTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolVMStart,
		Title:       "Start a stopped guest",
		Annotations: startAnnotations,
	}, ops(proxmoxsafe.OpStartGuest), (*proxmoxsafe.Client).StartGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("start", r)
	}).describedBy(mutationWords{
		does: "Start one stopped VM or container.",
	}).returning("outcome.after", "outcome.uptime")
}
