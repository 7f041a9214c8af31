package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// snapshotRollbackTool declares the snapshot_rollback tool.
func snapshotRollbackTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolSnapshotRollback,
		Title:       "Roll back to a snapshot",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpRollbackSnapshot), (*proxmoxsafe.Client).RollbackSnapshot, func(_ proxmoxsafe.RollbackSnapshotInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("rollback", r) + " to snapshot " + clean(r.Target.Snapshot, 64)
	}).describedBy(mutationWords{
		does:    "Roll one guest back to one of its snapshots. Everything that changed since the snapshot (disks, configuration, and the memory of a running guest) is lost; Proxmox stops a running guest first. A VM snapshot that includes RAM runs the VM again afterwards; otherwise the guest stays stopped unless start: true.",
		unless:  "the snapshot exists (not current), the guest is not locked and not a template",
		shows:   "the exact phrase, the current state, what will be lost and whether the snapshot has RAM",
		returns: "the task UPID (qmrollback or vzrollback)",
		waits:   "then until the guest's current state is based on the snapshot",
	})
}
