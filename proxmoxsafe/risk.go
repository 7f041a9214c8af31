package proxmoxsafe

// ActionRisk says in one line what can go wrong with an action, for the
// plans shown to the person who approves it (the elicitation form, the
// approval page). Unknown actions get a generic line.
func ActionRisk(action string) string {
	switch action {
	case "stop", "reset":
		return "the guest loses power without a clean shutdown; unsaved data can be lost."
	case "shutdown", "reboot", "suspend":
		return "services on the guest are interrupted until it is running again."
	case "start", "resume":
		return "the guest starts using CPU, memory and network; check it should run here."
	case "snapshot":
		return "the snapshot uses storage until deleted; a snapshot with vmstate also saves memory."
	case "delsnapshot", "snapshot-cleanup":
		return "a deleted snapshot cannot be restored."
	case "clone", "create":
		return "the new guest takes storage, and CPU and memory once started; a full clone copies every disk and loads the storage while it runs."
	case "destroy":
		return "the guest, its disks and snapshots are gone for good; only a backup can bring them back."
	case "migrate":
		return "a live migration pauses the VM briefly at the switch-over; copying disks loads storage and network; a restart migration stops the container's services meanwhile."
	}
	return "review the effect above."
}
