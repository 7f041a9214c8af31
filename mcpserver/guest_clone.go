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
		"node": "The source's node.",
		"vmid": "The source guest or template.",
	}).describedBy(mutationWords{
		does:    "Copy one guest, or make one from a template (linked: true for a linked clone), optionally onto another node (target, shared storage) or storage, with name, pool, description; newid defaults to the next free VMID. It stays stopped.",
		unless:  "both nodes are allowed, the source, newid and pool are not protected, newid is free, a linked source is a template, a container copied in full is stopped and the storage is usable (shared for another node)",
		phrase:  "pass newid explicitly",
		returns: "new_guest",
	}).returning("new_guest")
}
