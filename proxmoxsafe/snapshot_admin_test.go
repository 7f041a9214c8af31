package proxmoxsafe_test

import (
	"context"
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// newSnapshotAdminEnv: the responder cluster plus VM 113, running, with a
// RAM snapshot and a disk-only one after it; only snapshot-admin enabled.
func newSnapshotAdminEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	cl := responderCluster()
	cl.Guests = append(cl.Guests, &proxmoxtest.Guest{VMID: 113, Node: "pve1", Type: "qemu", Name: "ramvm", Status: "running", Uptime: 7200,
		Snapshots: []*proxmoxtest.Snapshot{{Name: "with-ram", VMState: true, SnapTime: 1735689600}, {Name: "disk-only", Parent: "with-ram", SnapTime: 1736294400}}})
	fake := proxmoxtest.NewUnstartedServer(cl)
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:   []string{"pve1", "pve2"},
			Classes:        []proxmoxsafe.Class{proxmoxsafe.ClassSnapshotAdmin},
			ProtectedNames: []string{"db"},
		}
		if mod != nil {
			mod(c)
		}
	})
}

func TestSnapshotAdminHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		call              func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error)
		method, path, frm string
		taskType          string
		observed          string
		status            string // the guest's status afterwards
	}{
		{name: "rollback of a stopped VM", method: "POST", path: "/nodes/pve1/qemu/107/snapshot/old-manual/rollback", taskType: "qmrollback",
			observed: "current state based on old-manual", status: "stopped",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := rollbackIn(107, "qemu", "old-manual", false)
				in.Wait = fastVerify()
				return c.RollbackSnapshot(ctx, in)
			}},
		{name: "rollback of a container with start", method: "POST", path: "/nodes/pve1/lxc/200/snapshot/auto1/rollback", frm: "start=1", taskType: "vzrollback",
			observed: "current state based on auto1", status: "running",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := rollbackIn(200, "lxc", "auto1", true)
				in.Wait = fastVerify()
				return c.RollbackSnapshot(ctx, in)
			}},
		{name: "rollback to a RAM snapshot runs the VM", method: "POST", path: "/nodes/pve1/qemu/113/snapshot/with-ram/rollback", taskType: "qmrollback",
			observed: "current state based on with-ram", status: "running",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := rollbackIn(113, "qemu", "with-ram", false)
				in.Wait = fastVerify()
				return c.RollbackSnapshot(ctx, in)
			}},
		{name: "delete with force", method: "DELETE", path: "/nodes/pve1/qemu/107/snapshot/auto3", frm: "force=1", taskType: "qmdelsnapshot",
			observed: "snapshot auto3 not in the snapshot list", status: "stopped",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := delSnapIn(107, "auto3", true)
				in.Wait = fastVerify()
				return c.DeleteSnapshot(ctx, in)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newSnapshotAdminEnv(t, nil)
			r, err := tt.call(t.Context(), e.client)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			params := func(r proxmoxtest.Request) string { // DELETE sends its parameters in the query
				return r.Form.Encode() + r.Query.Encode()
			}
			if len(muts) != 1 || muts[0].Method != tt.method || muts[0].Path != tt.path || params(muts[0]) != tt.frm {
				t.Fatalf("mutating requests = %+v, want one %s %s with %q", muts, tt.method, tt.path, tt.frm)
			}
			if r.Task.Type != tt.taskType {
				t.Errorf("task type = %q, want %q", r.Task.Type, tt.taskType)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed and verified %q", o, tt.observed)
			}
			st, err := e.client.GuestStatus(t.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: r.Target.Type, VMID: r.Target.VMID}})
			if err != nil || st.Status != tt.status {
				t.Errorf("status afterwards = %+v, %v; want %s", st, err, tt.status)
			}
			if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
		})
	}
}

func TestSnapshotAdminRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		call    func(ctx context.Context, c *proxmoxsafe.Client) error
		kind    error
		mention string
		noReq   bool
	}{
		{name: "class not enabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot} },
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(107, "qemu", "auto1", false))
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: `"snapshot-admin" mutation class is not enabled`, noReq: true},
		{name: "protected guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(101, "qemu", "auto1", false))
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: "protected"},
		{name: "rollback to a missing snapshot",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(107, "qemu", "nope", false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "no snapshot named nope"},
		{name: "rollback to current",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(107, "qemu", "current", false))
				return err
			}, kind: proxmoxsafe.ErrInvalidInput, mention: "snapname", noReq: true},
		{name: "rollback of a locked guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(110, "qemu", "auto1", false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "rollback of a template",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RollbackSnapshot(ctx, rollbackIn(109, "qemu", "auto1", false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "template"},
		{name: "delete current",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.DeleteSnapshot(ctx, delSnapIn(107, "Current", false))
				return err
			}, kind: proxmoxsafe.ErrInvalidInput, mention: "snapname", noReq: true},
		{name: "delete of a locked guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.DeleteSnapshot(ctx, delSnapIn(110, "auto1", false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "rollback phrase for another snapshot",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := rollbackIn(107, "qemu", "auto1", false)
				in.Approval = rollbackIn(107, "qemu", "auto2", false).Approval
				_, err := c.RollbackSnapshot(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE rollback pve1/qemu/107/auto1"},
		{name: "rollback phrase without start=1",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := rollbackIn(107, "qemu", "auto1", true)
				in.Approval = rollbackIn(107, "qemu", "auto1", false).Approval
				_, err := c.RollbackSnapshot(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE rollback pve1/qemu/107/auto1 start=1"},
		{name: "delete phrase does not approve a rollback",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := rollbackIn(107, "qemu", "auto1", false)
				in.Approval = delSnapIn(107, "auto1", false).Approval
				_, err := c.RollbackSnapshot(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE rollback pve1/qemu/107/auto1"},
		{name: "delete phrase without force=1",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := delSnapIn(107, "auto1", true)
				in.Approval = delSnapIn(107, "auto1", false).Approval
				_, err := c.DeleteSnapshot(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "force=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newSnapshotAdminEnv(t, tt.mod)
			assertRefusedNothingSent(t, e, tt.call(t.Context(), e.client), tt.kind, tt.mention, tt.noReq)
		})
	}
}
