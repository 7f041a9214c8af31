package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// containerCreateTool declares the container_create tool.
func containerCreateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolContainerCreate,
		Title:       "Create a container",
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCreateContainer), (*proxmoxsafe.Client).CreateContainer, func(in proxmoxsafe.CreateContainerInput, r *proxmoxsafe.Receipt) string {
		return "creation of " + newGuestLabel(r) + " (" + clean(in.Hostname, 64) + ")"
	}).describedBy(mutationWords{
		does: "Create one LXC container from an OS template, with eth0 (dhcp or static) and root's SSH keys (no password); unprivileged unless privileged.",
	}).returning("new_guest")
}
