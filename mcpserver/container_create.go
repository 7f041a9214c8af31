package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// containerCreateTool declares the container_create tool.
func containerCreateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolContainerCreate,
		Title: "Create a container",
		Description: "Create one LXC container from an OS template (ostemplate, a vztmpl volume) with a hostname, CPU cores, memory, swap, a root disk (rootfs_storage, rootfs_size_gib), eth0 on a bridge with ip dhcp or a static IPv4/prefix and gateway, unprivileged unless privileged: true, and SSH public keys for root (ssh_public_keys). There is no password parameter: keys are the only way in it sets up. The VMID is vmid, or the next free one when omitted. The container is not started. " +
			"Refused (nothing is done) unless the operator enabled the provision class, allows the node and does not protect the VMID or the pool, and: the VMID is free, the node is online, the root disk storage exists on the node, is enabled, active and has content rootdir, and the template exists on the node. " +
			"Needs the approval phrase \"APPROVE create <node>/lxc/<vmid>\" followed by every parameter sent (ostemplate=, hostname=, cores=, memory=, swap=, rootfs=<storage>:<GiB>, net0=name=eth0,bridge=<bridge>,ip=<ip>[,gw=<gw>], unprivileged=<1|0>, then ssh-public-keys=sha256:<digest>, pool=, description=sha256:<digest> where set), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass vmid explicitly on the approving call. " +
			"Returns a receipt with the task UPID (vzcreate; the container is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the container exists, unlocked, and its configuration reads back as requested.",
		Class:       proxmoxsafe.ClassProvision,
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCreateContainer), (*proxmoxsafe.Client).CreateContainer, func(in proxmoxsafe.CreateContainerInput, r *proxmoxsafe.Receipt) string {
		return "creation of " + newGuestLabel(r) + " (" + clean(in.Hostname, 64) + ")"
	}).approvalShowing("the exact phrase with every parameter it covers")
}
