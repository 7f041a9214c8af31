package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestPowerTool declares the guest_power tool.
func guestPowerTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolGuestPower,
		Title: "Guest power",
		Description: "Start, shut down, reboot or stop one guest. " +
			"Refused (nothing is done) unless the operator enabled the power class, allows the node and does not protect the guest, and the guest's current state makes sense for the action (not locked, not a template; start only when stopped; shutdown, reboot and stop only when running). " +
			"Needs the approval phrase \"APPROVE <action> <node>/<type>/<vmid>\": call without approval first, show the user the refusal (exact phrase, current state, effect) and pass the phrase only once they agree. " +
			"Returns a receipt with the task UPID: submission, not completion. " +
			"With wait: true it waits (timeout_seconds, default 30) for the task and re-reads the guest's power state (for HA-managed guests until the HA manager has acted), and says completed OK, completed with warnings, FAILED (a tool error, with the exit status and last log lines) or still running at the timeout (not an error: check the task later).",
		Class:       proxmoxsafe.ClassPower,
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpGuestPower), (*proxmoxsafe.Client).GuestPower, func(_ proxmoxsafe.GuestPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest(r.Action, r)
	})
}
