package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// snapshotGuestTool declares the snapshot_guest tool.
func snapshotGuestTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolSnapshotGuest,
		Title:       "Snapshot guest",
		Annotations: snapshotAnnotations,
	}, ops(proxmoxsafe.OpSnapshotGuest), (*proxmoxsafe.Client).SnapshotGuest, func(_ proxmoxsafe.SnapshotGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("snapshot "+r.Target.Snapshot, r)
	}).describedBy(mutationWords{
		does: "Snapshot one guest (vmstate: true saves a VM's memory too); existing snapshots are never changed.",
	}).returning("target.snapname")
}
