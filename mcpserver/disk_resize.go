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
		does: "Grow one disk of a guest, never shrink; partitions and file systems are grown inside the guest.",
	}).returning("changes", "outcome.pending")
}
