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
		"vmid": "The source.",
	}).describedBy(mutationWords{
		does:   "Copy one guest or template (linked: a linked clone of a template), optionally to another node (target; shared storage) or storage.",
		unless: "a container copied in full is stopped",
	}).returning("new_guest")
}
