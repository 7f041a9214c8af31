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
		does:   "Reboot one running VM or container cleanly (the guest OS shuts down and starts again).",
		unless: "the guest has been up for at least the operator's minimum uptime (default 1 hour: no reboot loops), is running (not stopped or paused), not locked, not a template and no task runs for it",
		waits:  "then until the guest runs again with a fresh uptime",
	})
}
