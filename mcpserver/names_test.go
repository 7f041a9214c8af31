package mcpserver

import (
	"slices"
	"testing"
)

// frozenToolNames are the tool names users and the original server's
// clients call, written out once more here: a tool renamed, removed or
// added in names.go fails TestToolNamesFrozen until this list (and so the
// compatibility table docs/TOOLS.md generates from the tools) says so on
// purpose. Renaming or removing one breaks its users: never do it. A new
// tool is named <noun>_<aspect> and added here at its place in the
// listing order of allTools (a read among the reads: TestToolsFollowPolicy
// expects every class-less read before the mutations).
var frozenToolNames = []string{
	"cluster_status", "node_status", "list_guests",
	"guest_status", "guest_config", "snapshot_list", "task_status", "task_list",
	"storage_list", "backup_list", "backup_coverage", "backup_jobs", "ceph_status", "ha_status", "node_health", "health_report", "permissions_check",
	"guest_addresses", "guest_agent_info",
	"metrics_history", "metrics_chart",
	"guest_power", "snapshot_guest",
	"vm_start", "vm_reboot", "vm_reset", "snapshot_cleanup",
	"guest_suspend", "guest_resume", "snapshot_rollback", "snapshot_delete",
	"guest_migrate",
	"api_get", "api_request",
	"guest_clone", "vm_create", "container_create",
	"guest_destroy",
	"disk_resize", "guest_config_set",
	"backup_create", "backup_restore", "backup_delete",
}

// TestToolNamesFrozen: the tools are exactly the frozen names, in listing
// order, and each name constant spells its tool.
func TestToolNamesFrozen(t *testing.T) {
	t.Parallel()
	var names []string
	for _, ti := range Tools(nil, nil) {
		names = append(names, ti.Name)
	}
	if !slices.Equal(names, frozenToolNames) {
		t.Errorf("tools %v\nwant the frozen names %v\n(a tool name never changes; a new tool is added to frozenToolNames at its place in allTools)", names, frozenToolNames)
	}
	consts := []string{
		ToolClusterStatus, ToolNodeStatus, ToolListGuests,
		ToolGuestStatus, ToolGuestConfig, ToolSnapshotList, ToolTaskStatus, ToolTaskList,
		ToolStorageList, ToolBackupList, ToolBackupCoverage, ToolBackupJobs, ToolCephStatus, ToolHAStatus, ToolNodeHealth, ToolHealthReport, ToolPermissionsCheck,
		ToolGuestAddresses, ToolGuestAgentInfo,
		ToolMetricsHistory, ToolMetricsChart,
		ToolGuestPower, ToolSnapshotGuest,
		ToolVMStart, ToolVMReboot, ToolVMReset, ToolSnapshotCleanup,
		ToolGuestSuspend, ToolGuestResume, ToolSnapshotRollback, ToolSnapshotDelete,
		ToolGuestMigrate,
		ToolAPIGet, ToolAPIRequest,
		ToolGuestClone, ToolVMCreate, ToolContainerCreate,
		ToolGuestDestroy,
		ToolDiskResize, ToolGuestConfigSet,
		ToolBackupCreate, ToolBackupRestore, ToolBackupDelete,
	}
	if !slices.Equal(consts, frozenToolNames) {
		t.Errorf("name constants %v\nwant %v", consts, frozenToolNames)
	}
}
