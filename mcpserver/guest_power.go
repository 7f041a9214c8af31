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
		unless: "start finds it stopped, the others running",
	}).returning("outcome.after", "outcome.uptime")
}
