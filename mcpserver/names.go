package mcpserver

// Tool names, in listing order. They are the public contract: users'
// configurations, allowlists and prompts, and the clients of the original
// server, call tools by these names, so none of them ever changes
// (docs/TOOLS.md, "Tool names (frozen)"; TestToolNamesFrozen). A new tool
// is named <noun>_<aspect>, e.g. guest_status or snapshot_list; the older
// names that do not follow the rule (list_guests, snapshot_guest,
// vm_start, …) stay.
const (
	// The original server's three reads.
	ToolClusterStatus = "cluster_status"
	ToolNodeStatus    = "node_status"
	ToolListGuests    = "list_guests"

	// Per-guest and task reads.
	ToolGuestStatus  = "guest_status"
	ToolGuestConfig  = "guest_config"
	ToolSnapshotList = "snapshot_list"
	ToolTaskStatus   = "task_status"
	ToolTaskList     = "task_list"

	// Infrastructure reads.
	ToolStorageList      = "storage_list"
	ToolBackupList       = "backup_list"
	ToolBackupCoverage   = "backup_coverage"
	ToolBackupJobs       = "backup_jobs"
	ToolCephStatus       = "ceph_status"
	ToolHAStatus         = "ha_status"
	ToolNodeHealth       = "node_health"
	ToolHealthReport     = "health_report"
	ToolPermissionsCheck = "permissions_check"

	// Inside guests: addresses and what the guest agent reports.
	ToolGuestAddresses = "guest_addresses"
	ToolGuestAgentInfo = "guest_agent_info"
	// Metrics history: as numbers, and drawn as a chart.
	ToolMetricsHistory = "metrics_history"
	ToolMetricsChart   = "metrics_chart"

	// The original server's two mutations.
	ToolGuestPower    = "guest_power"
	ToolSnapshotGuest = "snapshot_guest"

	// The responder class: narrow, guarded tools for an automated
	// responder with no human in the loop.
	ToolVMStart         = "vm_start"
	ToolVMReboot        = "vm_reboot"
	ToolVMReset         = "vm_reset"
	ToolSnapshotCleanup = "snapshot_cleanup"

	// The admin surface (classes power-extra and snapshot-admin), each off
	// unless its class is enabled (the binary's admin profile enables them).
	ToolGuestSuspend     = "guest_suspend"
	ToolGuestResume      = "guest_resume"
	ToolSnapshotRollback = "snapshot_rollback"
	ToolSnapshotDelete   = "snapshot_delete"

	// The migrate class: a guest moves to another node.
	ToolGuestMigrate = "guest_migrate"

	// The generic API gateway. Two tools, not one with a method argument:
	// annotations are per tool and clients trust them to decide what to
	// auto-approve, so the read tool (class gateway) is honestly read-only
	// and the write tool (class gateway-write, never in a profile) is
	// honestly destructive; read-only mode keeps api_get and drops
	// api_request by annotation alone.
	ToolAPIGet     = "api_get"
	ToolAPIRequest = "api_request"

	// The provision class, off unless enabled (the admin profile enables it).
	ToolGuestClone      = "guest_clone"
	ToolVMCreate        = "vm_create"
	ToolContainerCreate = "container_create"

	// The destroy class: a guest deleted with its disks.
	ToolGuestDestroy = "guest_destroy"

	// The config class.
	ToolDiskResize     = "disk_resize"
	ToolGuestConfigSet = "guest_config_set"

	// The backup, restore and destroy (a backup volume) classes.
	ToolBackupCreate  = "backup_create"
	ToolBackupRestore = "backup_restore"
	ToolBackupDelete  = "backup_delete"
)
