package proxmoxsafe

// operations is the one list of this package's operations, in the order
// [Operations], [Requirements] and [ActionRisk] follow. Each entry is
// declared in its operation's own file; adding an operation means
// declaring it there and naming it here (no init registration: the list
// is read in one place). operations_test.go checks every entry against
// the code and the fake.
var operations = []*operation{
	// Reads.
	&clusterStatusOp,
	&nodeStatusOp,
	&listGuestsOp,
	&guestStatusOp,
	&guestConfigOp,
	&listSnapshotsOp,
	&taskStatusOp,
	&taskLogOp,
	&listTasksOp,
	&listStorageOp,
	&listBackupsOp,
	&backupCoverageOp,
	&listBackupJobsOp,
	&cephStatusOp,
	&haStatusOp,
	&guestAddressesOp,
	&guestAgentInfoOp,
	&nodeHealthOp,
	&nodeMetricsOp,
	&guestMetricsOp,
	&storageMetricsOp,
	&healthReportOp,
	// Mutations, by class: power, snapshot, responder, snapshot-admin,
	// power-extra, provision, destroy, migrate, config, backup, restore, destroy (a backup).
	&guestPowerOp,
	&snapshotGuestOp,
	&startGuestOp,
	&rebootGuestOp,
	&resetGuestOp,
	&cleanupSnapshotsOp,
	&deleteSnapshotOp,
	&rollbackSnapshotOp,
	&suspendGuestOp,
	&resumeGuestOp,
	&cloneGuestOp,
	&createVMOp,
	&createContainerOp,
	&destroyGuestOp,
	&migrateGuestOp,
	&resizeDiskOp,
	&setGuestConfigOp,
	&backupGuestOp,
	&restoreBackupOp,
	&deleteBackupOp,
	// The privilege report and the version need no privilege.
	&permissionsOp,
	&versionOp,
	// The gateway: whatever the requested path needs.
	&apiGetOp,
	&apiRequestOp,
}
