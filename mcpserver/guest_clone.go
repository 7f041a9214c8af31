package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestCloneTool declares the guest_clone tool.
// Clone, VM create and container create are three tools: their inputs
// share almost nothing.
func guestCloneTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestClone,
		Title:       "Clone a guest",
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCloneGuest), (*proxmoxsafe.Client).CloneGuest, func(_ proxmoxsafe.CloneGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("clone", r) + " as " + newGuestLabel(r)
	}).describingParams(map[string]string{
		"node": "Node the source guest is on. It must be on the operator's node allowlist.",
		"type": "Guest type of the source: qemu (VM) or lxc (container).",
		"vmid": "VMID of the source guest (a VM, a container or a template).",
	}).describedBy(mutationWords{
		does:    "Copy one VM or container, or make a new guest from a template: a full, independent copy by default, or with linked: true a linked clone of a template. Optionally on another node (target; the disks must be on shared storage), on another storage (storage, full clones only), with a name (the container's hostname), a pool and a description. The new VMID is newid, or the next free one when omitted.",
		allows:  "allows the source's node and the target node and does not protect the source, the new VMID or the pool",
		unless:  "the new VMID is free, the source exists and is not locked, a linked clone's source is a template, a container to copy in full is stopped, the target node is online, and the storage exists on the node(s), is enabled, active, has content images (VM) or rootdir (container), and is shared when the clone goes to another node",
		phrase:  "exactly as the refusal or a plan: true call states it; pass newid explicitly on the approving call",
		shows:   "the exact phrase with every parameter it covers",
		returns: "the task UPID (qmclone or vzclone; the new guest is locked while it runs) and new_guest",
		waits:   "then until the new guest exists, unlocked, with the requested name, description and pool",
		after:   "The clone stays stopped: start it with guest_power.",
	})
}
