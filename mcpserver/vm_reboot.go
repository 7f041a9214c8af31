package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// vmRebootTool declares the vm_reboot tool.
func vmRebootTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolVMReboot,
		Title:       "Reboot a guest (guarded)",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpRebootGuest), (*proxmoxsafe.Client).RebootGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("reboot", r)
	}).describedBy(mutationWords{
		does:   "Reboot one running VM or container cleanly.",
		unless: "it runs unpaused and has been up the minimum uptime (default 1 h)",
	}).returning("outcome.after", "outcome.uptime")
}
