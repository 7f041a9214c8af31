package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestPowerTool declares the guest_power tool.
func guestPowerTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestPower,
		Title:       "Guest power",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpGuestPower), (*proxmoxsafe.Client).GuestPower, func(_ proxmoxsafe.GuestPowerInput, r *proxmoxsafe.Receipt) string {
		return ofGuest(r.Action, r)
	}).describedBy(mutationWords{
		does:   "Start, shut down, reboot or stop one guest.",
		unless: "the guest's current state makes sense for the action (not locked, not a template; start only when stopped; shutdown, reboot and stop only when running)",
		waits:  "re-reads the guest's power state (for HA-managed guests until the HA manager has acted)",
	})
}
