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
		does: "Roll one guest back to a snapshot, losing everything since (disks, config, a running guest's memory); a running guest is stopped first. It runs again only from a RAM snapshot or with start: true.",
	}).returning("target.snapname")
}
