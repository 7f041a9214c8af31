package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestCloneTool declares the guest_clone tool.
// Clone, VM create and container create are three tools: their inputs
// share almost nothing.
func guestCloneTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolGuestClone,
		Title: "Clone a guest",
		Description: "Copy one VM or container, or make a new guest from a template: a full, independent copy by default, or with linked: true a linked clone of a template. Optionally on another node (target; the disks must be on shared storage), on another storage (storage, full clones only), with a name (the container's hostname), a pool and a description. The new VMID is newid, or the next free one when omitted. " +
			"Refused (nothing is done) unless the operator enabled the provision class, allows the source's node and the target node and does not protect the source, the new VMID or the pool, and: the new VMID is free, the source exists and is not locked, a linked clone's source is a template, a container to copy in full is stopped, the target node is online, and the storage exists on the node(s), is enabled, active, has content images (VM) or rootdir (container), and is shared when the clone goes to another node. " +
			"Needs the approval phrase \"APPROVE clone <node>/<type>/<vmid> newid=<id> full=<1|0>\" followed by the parameters given (target=, storage=, name= or hostname=, pool=, description=sha256:<digest>), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass newid explicitly on the approving call. " +
			"Returns a receipt with the task UPID (qmclone or vzclone; the new guest is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the new guest exists, unlocked, with the requested name, description and pool. The clone stays stopped: start it with guest_power.",
		Class:       proxmoxsafe.ClassProvision,
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCloneGuest), (*proxmoxsafe.Client).CloneGuest, func(_ proxmoxsafe.CloneGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("clone", r) + " as " + newGuestLabel(r)
	}).approvalShowing("the exact phrase with every parameter it covers")
}
