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
		does:    "Delete one named snapshot of a guest (it cannot be restored afterwards); force: true removes it from the configuration even if removing its disk snapshots fails. Keep markers are not consulted: this deletes what it is told to (snapshot_cleanup applies the retention policy).",
		unless:  "the snapshot exists (not current), the guest is not locked and not a template",
		returns: "the task UPID (qmdelsnapshot or vzdelsnapshot)",
		waits:   "then until the snapshot is gone from the list",
	})
}
