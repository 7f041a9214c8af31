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
		does:    "Create one LXC container from an OS template (ostemplate, a vztmpl volume) with a hostname, CPU cores, memory, swap, a root disk (rootfs_storage, rootfs_size_gib), eth0 on a bridge with ip dhcp or a static IPv4/prefix and gateway, unprivileged unless privileged: true, and SSH public keys for root (ssh_public_keys). There is no password parameter: keys are the only way in it sets up. The VMID is vmid, or the next free one when omitted. The container is not started.",
		allows:  "allows the node and does not protect the VMID or the pool",
		unless:  "the VMID is free, the node is online, the root disk storage exists on the node, is enabled, active and has content rootdir, and the template exists on the node",
		phrase:  "exactly as the refusal or a plan: true call states it; pass vmid explicitly on the approving call",
		shows:   "the exact phrase with every parameter it covers",
		returns: "the task UPID (vzcreate; the container is locked while it runs) and new_guest",
		waits:   "then until the container exists, unlocked, and its configuration reads back as requested",
	})
}
