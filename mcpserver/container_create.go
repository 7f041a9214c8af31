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
		does:    "Create one LXC container, stopped, from an OS template: hostname, resources, a root disk, eth0 (dhcp or static), root's SSH keys (no password); unprivileged unless privileged: true. vmid defaults to the next free one.",
		unless:  "the VMID (free) and pool are not protected, the node is online, rootfs_storage holds rootdir and the template exists",
		phrase:  "pass vmid explicitly",
		returns: "new_guest",
	}).returning("new_guest")
}
