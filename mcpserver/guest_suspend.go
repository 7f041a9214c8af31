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
		does:    "Pause one running QEMU VM in memory, or with todisk: true hibernate it (its memory is written to disk and the VM stops, locked \"suspended\", until guest_resume or a start). Containers are not supported (Proxmox's container suspend is experimental).",
		unless:  "the VM is running, not already paused, not locked and not a template; an HA-managed VM cannot be hibernated",
		returns: "the task UPID (qmpause, or qmsuspend for todisk)",
		waits:   "then until the VM is paused (or stopped and locked suspended)",
	})
}
