package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// snapshotGuestTool declares the snapshot_guest tool.
func snapshotGuestTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolSnapshotGuest,
		Title: "Snapshot guest",
		Description: "Take a snapshot of one guest (optionally with the VM's memory). Existing snapshots are never changed. " +
			"Refused (nothing is done) unless the operator enabled the snapshot class, allows the node and does not protect the guest, and the guest is not locked, not a template and has no snapshot of that name. " +
			"Needs the approval phrase \"APPROVE snapshot <node>/<type>/<vmid>/<snapname>\", with \" vmstate=1\" appended when saving the memory (an approval without it never covers a memory dump): call without approval first, show the user the refusal (exact phrase, current state, effect) and pass the phrase only once they agree. " +
			"Returns a receipt with the task UPID: submission, not completion. " +
			"With wait: true it waits (timeout_seconds, default 30) for the task and checks that the snapshot is listed, and says completed OK, completed with warnings, FAILED (a tool error, with the exit status and last log lines) or still running at the timeout (not an error: check the task later).",
		Class:       proxmoxsafe.ClassSnapshot,
		Annotations: snapshotAnnotations,
	}, ops(proxmoxsafe.OpSnapshotGuest), (*proxmoxsafe.Client).SnapshotGuest, func(_ proxmoxsafe.SnapshotGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("snapshot "+r.Target.Snapshot, r)
	})
}
