package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// snapshotDeleteTool declares the snapshot_delete tool.
func snapshotDeleteTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolSnapshotDelete,
		Title:       "Delete a snapshot",
		Annotations: cleanupAnnotations,
	}, ops(proxmoxsafe.OpDeleteSnapshot), (*proxmoxsafe.Client).DeleteSnapshot, func(_ proxmoxsafe.DeleteSnapshotInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("deletion of snapshot "+clean(r.Target.Snapshot, 64), r)
	}).describedBy(mutationWords{
		does: "Delete one snapshot for good (force: true even if its disk snapshots fail); keep markers do not protect it.",
	}).returning("target.snapname")
}
