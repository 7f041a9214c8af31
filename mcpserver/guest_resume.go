package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestResumeTool declares the guest_resume tool.
func guestResumeTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolGuestResume,
		Title: "Resume a VM",
		Description: "Resume one paused QEMU VM, or start a hibernated one (stopped, locked \"suspended\") from its saved memory. " +
			"Refused (nothing is done) unless the operator enabled the power-extra class, allows the node and does not protect the guest, and the VM is paused or hibernated (a running or simply stopped VM is refused: use guest_power start), not otherwise locked and not a template. " +
			"Needs the approval phrase \"APPROVE resume <node>/qemu/<vmid>\" unless the operator set another approval level. " +
			"Returns a receipt with the task UPID (qmresume); with wait: true it waits (timeout_seconds) until the VM runs unpaused.",
		Class:       proxmoxsafe.ClassPowerExtra,
		Annotations: startAnnotations,
	}, ops(proxmoxsafe.OpResumeGuest), (*proxmoxsafe.Client).ResumeGuest, func(_ proxmoxsafe.ResumeGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("resume", r)
	})
}
