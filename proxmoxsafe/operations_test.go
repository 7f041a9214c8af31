package proxmoxsafe_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// This suite crosses every operation of the one list (operations.go):
// each declaration is checked against what the code really sends and
// against the fake.

// realPrivileges are the privileges Proxmox VE knows. Source: the
// privileges root@pam holds on PVE 7.4 (every privilege of the built-in
// roles; shared/pve-api/responses/pve7/cluster4-access-permissions-root.json,
// GET /access/permissions), plus the two that PVE 9 added to the roles for
// the guest agent (shared/pve-api/schema-subset.json, the permissions of
// /nodes/{node}/qemu/{vmid}/agent/*).
var realPrivileges = []string{
	"Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit",
	"Group.Allocate", "Permissions.Modify", "Pool.Allocate", "Pool.Audit", "Realm.Allocate", "Realm.AllocateUser",
	"SDN.Allocate", "SDN.Audit", "SDN.Use",
	"Sys.Audit", "Sys.Console", "Sys.Incoming", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog", "User.Modify",
	"VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit",
	"VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network", "VM.Config.Options", "VM.Console",
	"VM.Migrate", "VM.Monitor", "VM.PowerMgmt", "VM.Snapshot", "VM.Snapshot.Rollback",
	// PVE 9.
	"VM.GuestAgent.Audit", "VM.GuestAgent.Unrestricted",
}

// aclPaths are the ACL path templates a privilege may be declared on.
var aclPaths = []string{"/", "/nodes/{node}", "/vms/{vmid}", "/storage/{storage}", "/sdn/zones"}

// opCase is one real call of an operation. A read runs read; a mutation
// runs plan (a Plan: true call, nil where the operation has none) and
// apply, first without an approval (the refusal names the phrase), then
// with the phrase.
type opCase struct {
	name  string
	env   func(t *testing.T) *env
	lxc   bool // the call targets a container (ContainerMethod applies)
	read  func(ctx context.Context, c *proxmoxsafe.Client) error
	plan  func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error)
	apply func(ctx context.Context, c *proxmoxsafe.Client, approval string) error
}

// everyClassByPhrase enables every class and lets the phrase approve each
// (destroy's and gateway-write's defaults are levels only a person gives).
func everyClassByPhrase(c *proxmoxsafe.Config) {
	c.Policy.Classes = allClasses
	c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
	for _, cl := range allClasses {
		c.Policy.Approvals[cl] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}
	}
}

func opsEnv(t *testing.T) *env { return newEnv(t, everyClassByPhrase) }

func infraOpsEnv(t *testing.T) *env { return newEnvWith(t, infraCluster(), everyClassByPhrase) }

func responderOpsEnv(t *testing.T) *env {
	return newResponderEnv(t, func(c *proxmoxsafe.Config) {
		everyClassByPhrase(c)
		c.Policy.Retention.MaxCount = 3
	})
}

func provisionOpsEnv(t *testing.T) *env { return newProvisionEnv(t, everyClassByPhrase) }

func destroyOpsEnv(t *testing.T) *env { return newDestroyEnv(t, everyClassByPhrase) }

func migrateOpsEnv(t *testing.T) *env { return newMigrateEnv(t, "9.1.1", everyClassByPhrase) }

func configOpsEnv(t *testing.T) *env { return newConfigEnv(t, everyClassByPhrase) }

// receiptErr keeps only the error of a mutation call.
func receiptErr(_ *proxmoxsafe.Receipt, err error) error { return err }

// receiptPlan returns a plan call's plan.
func receiptPlan(r *proxmoxsafe.Receipt, err error) (*proxmoxsafe.Plan, error) {
	if err != nil {
		return nil, err
	}
	return r.Plan, nil
}

// aTask submits a start of guest 101 and returns its UPID, for the task reads.
func aTask(ctx context.Context, c *proxmoxsafe.Client) (string, error) {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStart}
	in.Approval = in.ApprovalPhrase()
	r, err := c.GuestPower(ctx, in)
	if err != nil {
		return "", err
	}
	return r.UPID, nil
}

var guest101 = proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}

// opCases has at least one real call of every operation of the list.
var opCases = map[proxmoxsafe.Operation][]opCase{
	proxmoxsafe.OpClusterStatus: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ClusterStatus(ctx)
		return err
	}}},
	proxmoxsafe.OpNodeStatus: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "pve1"})
		return err
	}}},
	proxmoxsafe.OpListGuests: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListGuests(ctx, proxmoxsafe.ListGuestsInput{})
		return err
	}}},
	proxmoxsafe.OpGuestAddresses: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.GuestAddresses(ctx, proxmoxsafe.GuestAddressesInput{VMID: 100})
		return err
	}}},
	proxmoxsafe.OpGuestAgentInfo: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.GuestAgentInfo(ctx, proxmoxsafe.GuestAgentInfoInput{Node: "pve1", VMID: 100})
		return err
	}}},
	proxmoxsafe.OpGuestStatus: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.GuestStatus(ctx, proxmoxsafe.GuestStatusInput{GuestRef: guest101})
		return err
	}}},
	proxmoxsafe.OpGuestConfig: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.GuestConfig(ctx, proxmoxsafe.GuestConfigInput{GuestRef: guest101})
		return err
	}}},
	proxmoxsafe.OpListSnapshots: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListSnapshots(ctx, proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}})
		return err
	}}},
	proxmoxsafe.OpTaskStatus: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.TaskStatus(ctx, proxmoxsafe.TaskLogInput{Node: "pve1", UPID: ctx.Value(upidKey{}).(string)})
		return err
	}}},
	proxmoxsafe.OpTaskLog: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.TaskLog(ctx, proxmoxsafe.TaskLogInput{Node: "pve1", UPID: ctx.Value(upidKey{}).(string)})
		return err
	}}},
	proxmoxsafe.OpListTasks: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListTasks(ctx, proxmoxsafe.ListTasksInput{Node: "pve1"})
		return err
	}}},
	proxmoxsafe.OpListStorage: {{env: infraOpsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListStorage(ctx, proxmoxsafe.ListStorageInput{Node: "pve1"})
		return err
	}}},
	proxmoxsafe.OpListBackups: {{env: infraOpsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListBackups(ctx, proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local"})
		return err
	}}},
	proxmoxsafe.OpBackupCoverage: {{env: infraOpsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.BackupCoverage(ctx, proxmoxsafe.BackupCoverageInput{})
		return err
	}}},
	proxmoxsafe.OpListBackupJobs: {{env: infraOpsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.ListBackupJobs(ctx, proxmoxsafe.ListBackupJobsInput{})
		return err
	}}},
	proxmoxsafe.OpCephStatus: {{env: infraOpsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.CephStatus(ctx)
		return err
	}}},
	proxmoxsafe.OpHAStatus: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.HAStatus(ctx)
		return err
	}}},
	proxmoxsafe.OpNodeHealth: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.NodeHealth(ctx, proxmoxsafe.NodeHealthInput{Node: "pve1"})
		return err
	}}},
	proxmoxsafe.OpNodeMetrics: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.NodeMetrics(ctx, proxmoxsafe.NodeMetricsInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
		return err
	}}},
	proxmoxsafe.OpGuestMetrics: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.GuestMetrics(ctx, proxmoxsafe.GuestMetricsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}})
		return err
	}}},
	proxmoxsafe.OpStorageMetrics: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.StorageMetrics(ctx, proxmoxsafe.StorageMetricsInput{Node: "pve1", Storage: "local", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "week"}})
		return err
	}}},
	proxmoxsafe.OpHealthReport: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.HealthReport(ctx, proxmoxsafe.HealthReportInput{})
		return err
	}}},
	proxmoxsafe.OpPermissions: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.Permissions(ctx)
		return err
	}}},
	proxmoxsafe.OpVersion: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.Version(ctx)
		return err
	}}},
	proxmoxsafe.OpAPIGet: {{env: opsEnv, read: func(ctx context.Context, c *proxmoxsafe.Client) error {
		_, err := c.APIGet(ctx, proxmoxsafe.APIGetInput{Path: "/nodes/pve1/status"})
		return err
	}}},

	proxmoxsafe.OpGuestPower: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.GuestPower(ctx, proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStart, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.GuestPower(ctx, proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStart, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpSnapshotGuest: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.SnapshotGuest(ctx, proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Name: "pre", VMState: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.SnapshotGuest(ctx, proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Name: "pre", VMState: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpBackupGuest: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.BackupGuest(ctx, proxmoxsafe.BackupGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Storage: "local", Notes: "before {{guestname}} upgrade", Protected: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.BackupGuest(ctx, proxmoxsafe.BackupGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Storage: "local", Notes: "before {{guestname}} upgrade", Protected: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpRestoreBackup: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.RestoreBackup(ctx, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", VMID: 150, Storage: "local-lvm", Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.RestoreBackup(ctx, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", VMID: 150, Storage: "local-lvm", Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpDeleteBackup: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.DeleteBackup(ctx, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: "local:backup/vzdump-qemu-101-2026_01_01-01_00_00.vma.zst", Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.DeleteBackup(ctx, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: "local:backup/vzdump-qemu-101-2026_01_01-01_00_00.vma.zst", Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpStartGuest: {{env: responderOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.StartGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 107}, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.StartGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 107}, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpRebootGuest: {{env: responderOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.RebootGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.RebootGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpResetGuest: {{env: responderOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.ResetGuest(ctx, proxmoxsafe.ResetGuestInput{Node: "pve1", Type: "qemu", VMID: 105, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.ResetGuest(ctx, proxmoxsafe.ResetGuestInput{Node: "pve1", Type: "qemu", VMID: 105, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpCleanupSnapshots: {{env: responderOpsEnv,
		// No plan: the dry run is the plan, and names no request.
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			_, err := c.CleanupSnapshots(ctx, proxmoxsafe.CleanupSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 107}, Apply: true, Approval: approval})
			return err
		}}},
	proxmoxsafe.OpDeleteSnapshot: {{env: opsEnv, lxc: true,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.DeleteSnapshot(ctx, proxmoxsafe.DeleteSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "before", Force: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.DeleteSnapshot(ctx, proxmoxsafe.DeleteSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "before", Force: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpRollbackSnapshot: {{env: opsEnv, lxc: true,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.RollbackSnapshot(ctx, proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "before", Start: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.RollbackSnapshot(ctx, proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "before", Start: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpSuspendGuest: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.SuspendGuest(ctx, proxmoxsafe.SuspendGuestInput{Node: "pve1", Type: "qemu", VMID: 100, ToDisk: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.SuspendGuest(ctx, proxmoxsafe.SuspendGuestInput{Node: "pve1", Type: "qemu", VMID: 100, ToDisk: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpResumeGuest: {{env: opsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.ResumeGuest(ctx, proxmoxsafe.ResumeGuestInput{Node: "pve1", Type: "qemu", VMID: 102, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.ResumeGuest(ctx, proxmoxsafe.ResumeGuestInput{Node: "pve1", Type: "qemu", VMID: 102, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpCloneGuest: {{env: provisionOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.CloneGuest(ctx, proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 150, Name: "web9", Description: "from the template", Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.CloneGuest(ctx, proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 150, Name: "web9", Description: "from the template", Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpCreateVM: {{env: provisionOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			in := vmIn()
			in.Approval, in.Plan = "", true
			return receiptPlan(c.CreateVM(ctx, in))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			in := vmIn()
			in.Approval = approval
			return receiptErr(c.CreateVM(ctx, in))
		}}},
	proxmoxsafe.OpCreateContainer: {{env: provisionOpsEnv, lxc: true,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			in := ctIn()
			in.Approval, in.Plan = "", true
			return receiptPlan(c.CreateContainer(ctx, in))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			in := ctIn()
			in.Approval = approval
			return receiptErr(c.CreateContainer(ctx, in))
		}}},
	proxmoxsafe.OpDestroyGuest: {{env: destroyOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.DestroyGuest(ctx, proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Purge: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.DestroyGuest(ctx, proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Purge: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpMigrateGuest: {{env: migrateOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.MigrateGuest(ctx, proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, TargetNode: "pve2", Online: true, Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.MigrateGuest(ctx, proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, TargetNode: "pve2", Online: true, Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpResizeDisk: {{env: configOpsEnv,
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			return receiptPlan(c.ResizeDisk(ctx, proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Disk: "scsi0", Size: "+10G", Controls: proxmoxsafe.Controls{Plan: true}}))
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			return receiptErr(c.ResizeDisk(ctx, proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Disk: "scsi0", Size: "+10G", Controls: proxmoxsafe.Controls{Approval: approval}}))
		}}},
	proxmoxsafe.OpSetGuestConfig: {
		{name: "qemu", env: configOpsEnv,
			plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
				return receiptPlan(c.SetGuestConfig(ctx, proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Set: map[string]string{"cores": "4", "name": "big"}, Controls: proxmoxsafe.Controls{Plan: true}}))
			},
			apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
				return receiptErr(c.SetGuestConfig(ctx, proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Set: map[string]string{"cores": "4", "name": "big"}, Controls: proxmoxsafe.Controls{Approval: approval}}))
			}},
		{name: "lxc", env: configOpsEnv, lxc: true,
			plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
				return receiptPlan(c.SetGuestConfig(ctx, proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Set: map[string]string{"cores": "2"}, Controls: proxmoxsafe.Controls{Plan: true}}))
			},
			apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
				return receiptErr(c.SetGuestConfig(ctx, proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Set: map[string]string{"cores": "2"}, Controls: proxmoxsafe.Controls{Approval: approval}}))
			}},
	},
	// A route no dedicated operation covers (a guest's firewall rule),
	// which the fake answers as Proxmox does (it models no firewall).
	proxmoxsafe.OpAPIRequest: {{env: func(t *testing.T) *env {
		e := opsEnv(t)
		acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
		return e
	},
		plan: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Plan, error) {
			res, err := c.APIRequest(ctx, proxmoxsafe.APIRequestInput{Method: "POST", Path: gatewayGuestPath, Params: map[string]string{"action": "ACCEPT"}, Plan: true})
			if err != nil {
				return nil, err
			}
			return res.Plan, nil
		},
		apply: func(ctx context.Context, c *proxmoxsafe.Client, approval string) error {
			_, err := c.APIRequest(ctx, proxmoxsafe.APIRequestInput{Method: "POST", Path: gatewayGuestPath, Params: map[string]string{"action": "ACCEPT"}, Approval: approval})
			return err
		}}},
}

type upidKey struct{}

var allClasses = []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot, proxmoxsafe.ClassSnapshotAdmin,
	proxmoxsafe.ClassResponder, proxmoxsafe.ClassPowerExtra, proxmoxsafe.ClassProvision, proxmoxsafe.ClassDestroy,
	proxmoxsafe.ClassMigrate, proxmoxsafe.ClassConfig, proxmoxsafe.ClassBackup, proxmoxsafe.ClassRestore, proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite}

// TestOperationsDeclarations checks every declaration of the list against
// the code: a risk line for every action, the route and method the real
// call sends, the phrase it asks for, real Proxmox privileges, and a fake
// that answers the request.
func TestOperationsDeclarations(t *testing.T) {
	t.Parallel()
	infos := proxmoxsafe.Operations()
	if len(infos) != len(opCases) {
		t.Errorf("%d operations declared, %d with a case here", len(infos), len(opCases))
	}
	for _, info := range infos {
		t.Run(string(info.Name), func(t *testing.T) {
			t.Parallel()
			checkDeclaration(t, info)
			cases, ok := opCases[info.Name]
			if !ok {
				t.Fatalf("%s has no case in opCases: add a real call of it", info.Name)
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					if tc.read != nil {
						checkRead(t, info, tc)
					} else {
						checkMutation(t, info, tc)
					}
				})
			}
		})
	}
}

// checkDeclaration checks what a declaration says without calling it.
func checkDeclaration(t *testing.T, info proxmoxsafe.OperationInfo) {
	t.Helper()
	if !strings.HasPrefix(info.Route, "/") {
		t.Errorf("route = %q, want a path template", info.Route)
	}
	mutation := len(info.Actions) > 0
	switch {
	case mutation && (info.Class == "" || !strings.HasPrefix(info.ApprovalFormat, "APPROVE ")):
		t.Errorf("a mutation needs a class and an approval format: class %q, format %q", info.Class, info.ApprovalFormat)
	case !mutation && (info.Method != "GET" || info.ApprovalFormat != ""):
		t.Errorf("a read (no actions) must be a GET without an approval format: method %q, format %q", info.Method, info.ApprovalFormat)
	}
	for _, a := range info.Actions {
		if a.Risk == "" || a.Risk == proxmoxsafe.ActionRisk("no-such-action") {
			t.Errorf("action %q has no risk line", a.Name)
		}
		if got := proxmoxsafe.ActionRisk(a.Name); got != a.Risk {
			t.Errorf("ActionRisk(%q) = %q, but %s declares %q: an action word has one risk line", a.Name, got, info.Name, a.Risk)
		}
	}
	for _, p := range info.Privileges {
		if !slices.Contains(realPrivileges, p.Name) {
			t.Errorf("privilege %q is not a Proxmox VE privilege", p.Name)
		}
		if !slices.Contains(aclPaths, p.Path) {
			t.Errorf("privilege %s on %q: not an ACL path template (%v)", p.Name, p.Path, aclPaths)
		}
	}
}

func checkRead(t *testing.T, info proxmoxsafe.OperationInfo, tc opCase) {
	e := tc.env(t)
	ctx := t.Context()
	if info.Name == proxmoxsafe.OpTaskStatus || info.Name == proxmoxsafe.OpTaskLog {
		id, err := aTask(ctx, e.client)
		if err != nil {
			t.Fatalf("submitting a task to read: %v", err)
		}
		ctx = context.WithValue(ctx, upidKey{}, id)
	}
	e.fake.ResetRequests()
	if err := tc.read(ctx, e.client); err != nil {
		t.Fatalf("the call failed (does the fake have a route for it?): %v", err)
	}
	for _, r := range e.requests() {
		if r.Method == info.Method && routeMatches(info.Route, r.Path) {
			return
		}
	}
	t.Errorf("no request matched the declared %s %s; sent: %v", info.Method, info.Route, reqLines(e.requests()))
}

func checkMutation(t *testing.T, info proxmoxsafe.OperationInfo, tc opCase) {
	e := tc.env(t)
	ctx := t.Context()
	method := info.Method
	if tc.lxc && info.ContainerMethod != "" {
		method = info.ContainerMethod
	}
	var phrase string
	if tc.plan != nil {
		p, err := tc.plan(ctx, e.client)
		if err != nil || p == nil {
			t.Fatalf("plan = %+v, %v", p, err)
		}
		if !routeMatches(info.Route, p.Path) {
			t.Errorf("the plan's path %q does not match the declared route %q", p.Path, info.Route)
		}
		if method != "" && p.Method != method {
			t.Errorf("the plan's method %q, declared %q", p.Method, method)
		}
		phrase = p.Approval
	}
	// Without an approval: refused, nothing mutating sent, and the refusal
	// names the phrase.
	err := tc.apply(ctx, e.client, "")
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) {
		t.Fatalf("without an approval: err = %v, want an ApprovalError", err)
	}
	if got := changing(e.fake.MutatingRequests()); len(got) != 0 {
		t.Errorf("mutating requests after the refusal: %v", reqLines(got))
	}
	if phrase != "" && ae.Required != phrase {
		t.Errorf("the refusal asks for %q, the plan for %q", ae.Required, phrase)
	}
	phrase = ae.Required
	if !formatMatches(info.ApprovalFormat, phrase) {
		t.Errorf("the phrase %q does not match the declared format %q", phrase, info.ApprovalFormat)
	}
	if word := strings.Fields(phrase + "  ")[1]; !slices.Contains(info.ActionNames(), word) {
		t.Errorf("the phrase's action %q is not among the declared actions %v", word, info.ActionNames())
	}
	// Approved: the fake must answer the request the declaration names.
	if err := tc.apply(ctx, e.client, phrase); err != nil {
		t.Fatalf("approved call failed (does the fake have a route for it?): %v", err)
	}
	sent := e.fake.MutatingRequests()
	if len(sent) == 0 {
		t.Fatal("the approved call sent no mutating request")
	}
	last := sent[len(sent)-1]
	if !routeMatches(info.Route, last.Path) || (method != "" && last.Method != method) {
		t.Errorf("sent %s %s, declared %s %s", last.Method, last.Path, method, info.Route)
	}
}

// changing leaves out the guest-agent ping, a POST that changes nothing
// (ResetGuest's precondition).
func changing(rs []proxmoxtest.Request) []proxmoxtest.Request {
	return slices.DeleteFunc(rs, func(r proxmoxtest.Request) bool { return strings.HasSuffix(r.Path, "/agent/ping") })
}

// routeMatches reports whether path fits the template: "{x}" is one
// segment, a last "{x...}" the rest, and so is a last "{volume}" (a
// volume id's "/" are sent as path separators, as Proxmox takes them).
func routeMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	for i, seg := range ts {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "...}") || seg == "{volume}" && i == len(ts)-1 {
			return i == len(ts)-1 && len(ps) > i && ps[i] != ""
		}
		if i >= len(ps) {
			return false
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if seg != ps[i] {
			return false
		}
	}
	return len(ts) == len(ps)
}

// formatMatches reports whether phrase fits an approval format: "<x>" is a
// value (no space), "[...]" an optional part, "…" more of the same part.
func formatMatches(format, phrase string) bool {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(format); {
		switch {
		case format[i] == '<':
			j := strings.IndexByte(format[i:], '>')
			b.WriteString(`[^ ]+`)
			i += j + 1
		case format[i] == '[':
			b.WriteString("(?:")
			i++
		case format[i] == ']':
			b.WriteString(")?")
			i++
		case format[i] == '|':
			b.WriteString("|")
			i++
		case strings.HasPrefix(format[i:], "…"):
			b.WriteString(`(?: [^ ]+)*`)
			i += len("…")
		default:
			b.WriteString(regexp.QuoteMeta(format[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()).MatchString(phrase)
}

// TestFormatAndRouteMatchers: the test's own matchers accept and refuse
// what they should.
func TestFormatAndRouteMatchers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, phrase string
		want           bool
	}{
		{"APPROVE <action> <node>/<type>/<vmid>", "APPROVE stop pve1/qemu/101", true},
		{"APPROVE <action> <node>/<type>/<vmid>", "APPROVE stop pve1/qemu/101 x=1", false},
		{"APPROVE snapshot <node>/<type>/<vmid>/<snapname>[ vmstate=1]", "APPROVE snapshot pve1/qemu/101/a1 vmstate=1", true},
		{"APPROVE snapshot <node>/<type>/<vmid>/<snapname>[ vmstate=1]", "APPROVE snapshot pve1/qemu/101/a1 vmstate=0", false},
		{"APPROVE config <node>/<type>/<vmid> <key>=<value>…[ delete=<key,…>]", "APPROVE config pve1/qemu/101 cores=4 name=x delete=tags", true},
	} {
		if got := formatMatches(tc.format, tc.phrase); got != tc.want {
			t.Errorf("formatMatches(%q, %q) = %v", tc.format, tc.phrase, got)
		}
	}
	for _, tc := range []struct {
		route, path string
		want        bool
	}{
		{"/nodes/{node}/{type}/{vmid}/status/{action}", "/nodes/pve1/qemu/101/status/start", true},
		{"/nodes/{node}/{type}/{vmid}/status/{action}", "/nodes/pve1/qemu/101/status", false},
		{"/nodes/{node}/qemu/{vmid}/status/reset", "/nodes/pve1/lxc/101/status/reset", false},
		{"/{path...}", "/cluster/ha/groups", true},
	} {
		if got := routeMatches(tc.route, tc.path); got != tc.want {
			t.Errorf("routeMatches(%q, %q) = %v", tc.route, tc.path, got)
		}
	}
}

// TestOperationsListed: the names, the requirements and the risk lines
// are the list's.
func TestOperationsListed(t *testing.T) {
	t.Parallel()
	infos := proxmoxsafe.Operations()
	names := proxmoxsafe.OperationNames()
	var reqOps []proxmoxsafe.Operation
	for _, r := range proxmoxsafe.Requirements() {
		if !slices.Contains(reqOps, r.Operation) {
			reqOps = append(reqOps, r.Operation)
		}
	}
	var withPrivs []proxmoxsafe.Operation
	for i, info := range infos {
		if names[i] != info.Name {
			t.Errorf("OperationNames()[%d] = %s, Operations()[%d] = %s", i, names[i], i, info.Name)
		}
		if len(info.Privileges) > 0 {
			withPrivs = append(withPrivs, info.Name)
		}
	}
	if !slices.Equal(reqOps, withPrivs) {
		t.Errorf("Requirements() operations = %v, want the declarations' %v", reqOps, withPrivs)
	}
	// A copy: changing it changes nothing.
	infos[0].Privileges[0].Name = "changed"
	if proxmoxsafe.Operations()[0].Privileges[0].Name == "changed" {
		t.Error("Operations() shares its slices")
	}
}

// TestPowerVerifyReadsOnlyItsState: the proof of a power action reads the
// task and the guest's status/current, nothing another operation's proof
// reads (snapshots, /cluster/resources, config).
func TestPowerVerifyReadsOnlyItsState(t *testing.T) {
	t.Parallel()
	e := opsEnv(t)
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStart}
	in.Approval = in.ApprovalPhrase()
	r, err := e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, receipt := range []*proxmoxsafe.Receipt{r, {UPID: r.UPID, Action: r.Action, Target: r.Target}} {
		e.fake.ResetRequests()
		out, err := e.client.Verify(t.Context(), receipt, &proxmoxsafe.WaitOptions{Interval: 1})
		if err != nil || !out.Verified {
			t.Fatalf("Verify = %+v, %v", out, err)
		}
		for _, line := range reqLines(e.requests()) {
			if !strings.HasSuffix(line, "/status/current") && !strings.Contains(line, "/tasks/") {
				t.Errorf("the proof of a start read %s", line)
			}
		}
	}
}

// TestEveryDeclarationListed: every operation declared in the package
// (a top-level `var xxxOp = operation{…}`) is named in the one list of
// operations.go, and the list names only declarations. A declaration
// left out of the list compiles (an unused package-level variable is
// legal) and every check above, which walks the list, would skip it.
func TestEveryDeclarationListed(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	declared, listed := map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					lit, ok := v.(*ast.CompositeLit)
					if !ok {
						continue
					}
					if id, ok := lit.Type.(*ast.Ident); ok && id.Name == "operation" {
						declared[vs.Names[i].Name] = true
					}
					if vs.Names[i].Name == "operations" {
						for _, el := range lit.Elts {
							if u, ok := el.(*ast.UnaryExpr); ok && u.Op == token.AND {
								if id, ok := u.X.(*ast.Ident); ok {
									listed[id.Name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	if len(listed) != len(proxmoxsafe.Operations()) {
		t.Fatalf("read %d entries of the list in operations.go, Operations() has %d: the parse is wrong", len(listed), len(proxmoxsafe.Operations()))
	}
	for name := range declared {
		if !listed[name] {
			t.Errorf("%s is declared but not in the list in operations.go: add it there", name)
		}
	}
	for name := range listed {
		if !declared[name] {
			t.Errorf("the list names %s, which is no `var … = operation{…}` declaration", name)
		}
	}
}
