package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// diskResizeTool declares the disk_resize tool.
// disk_resize and guest_config_set are two tools: their preconditions,
// phrases and proofs differ.
func diskResizeTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolDiskResize,
		Title:       "Grow a disk",
		Annotations: snapshotAnnotations,
	}, ops(proxmoxsafe.OpResizeDisk), (*proxmoxsafe.Client).ResizeDisk, func(_ proxmoxsafe.ResizeDiskInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("resize of "+changesText(r.Changes), r)
	}).describedBy(mutationWords{
		does:    "Grow one disk of a guest, never shrink; partitions and file systems grow inside the guest.",
		unless:  "the disk is a volume with a size and the config is unchanged since read",
		returns: "changes",
	}).returning("changes")
}
