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
		does:   "Start one stopped VM or container.",
		allows: "allows the node and does not protect the guest (by VMID, name, tag or pool)",
		unless: "the guest is stopped (not running or paused), not locked, not a template and no task runs for it",
		waits:  "then until the guest runs",
	})
}
