package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestResumeTool declares the guest_resume tool.
func guestResumeTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestResume,
		Title:       "Resume a VM",
		Annotations: startAnnotations,
	}, ops(proxmoxsafe.OpResumeGuest), (*proxmoxsafe.Client).ResumeGuest, func(_ proxmoxsafe.ResumeGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("resume", r)
	}).describedBy(mutationWords{
		does: "Resume one paused QEMU VM, or start a hibernated one from its saved memory (a stopped one: guest_power).",
	}).returning("outcome.after", "outcome.uptime")
}
