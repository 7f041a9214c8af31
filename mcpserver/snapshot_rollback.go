package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// snapshotRollbackTool declares the snapshot_rollback tool.
func snapshotRollbackTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolSnapshotRollback,
		Title: "Roll back to a snapshot",
		Description: "Roll one guest back to one of its snapshots. Everything that changed since the snapshot (disks, configuration, and the memory of a running guest) is lost; Proxmox stops a running guest first. A VM snapshot that includes RAM runs the VM again afterwards; otherwise the guest stays stopped unless start: true. " +
			"Refused (nothing is done) unless the operator enabled the snapshot-admin class, allows the node and does not protect the guest, and the snapshot exists (not current), the guest is not locked and not a template. " +
			"Needs the approval phrase \"APPROVE rollback <node>/<type>/<vmid>/<snapname>\" (plus \" start=1\" with start) unless the operator set another approval level: call without approval first and show the user the refusal, which says what will be lost and whether the snapshot has RAM. " +
			"Returns a receipt with the task UPID (qmrollback or vzrollback); with wait: true it waits (timeout_seconds) until the guest's current state is based on the snapshot.",
		Class:       proxmoxsafe.ClassSnapshotAdmin,
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpRollbackSnapshot), (*proxmoxsafe.Client).RollbackSnapshot, func(_ proxmoxsafe.RollbackSnapshotInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("rollback", r) + " to snapshot " + clean(r.Target.Snapshot, 64)
	}).approvalShowing("the exact phrase, the current state and what will be lost")
}
