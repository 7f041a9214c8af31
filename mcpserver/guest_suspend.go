package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestSuspendTool declares the guest_suspend tool.
// Suspend and resume are two tools, not one with an action: their
// preconditions, effects and parameters (todisk) differ, and each approval
// phrase names its verb.
func guestSuspendTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestSuspend,
		Title:       "Suspend a VM",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpSuspendGuest), (*proxmoxsafe.Client).SuspendGuest, func(in proxmoxsafe.SuspendGuestInput, r *proxmoxsafe.Receipt) string {
		if in.ToDisk {
			return ofGuest("suspend to disk", r)
		}
		return ofGuest("suspend", r)
	}).describedBy(mutationWords{
		does: "Pause one running QEMU VM, or hibernate it with todisk: true (stopped and locked until guest_resume; not if HA-managed).",
	}).returning("outcome.after", "outcome.uptime")
}
