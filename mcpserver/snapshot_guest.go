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
		does:   "Take a snapshot of one guest, with vmstate: true including the VM's memory. Existing snapshots are never changed.",
		unless: "no snapshot has that name",
		phrase: "without vmstate=1 it never covers a memory dump",
	})
}
