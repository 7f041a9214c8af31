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
		does:    "Resume one paused QEMU VM, or start a hibernated one (stopped, locked \"suspended\") from its saved memory.",
		unless:  "the VM is paused or hibernated (a running or simply stopped VM is refused: use guest_power start), not otherwise locked and not a template",
		returns: "the task UPID (qmresume)",
		waits:   "then until the VM runs unpaused",
	})
}
