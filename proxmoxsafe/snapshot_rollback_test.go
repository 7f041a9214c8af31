package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func rollbackIn(vmid int, typ proxmoxsafe.GuestType, snap string, start bool) proxmoxsafe.RollbackSnapshotInput {
	in := proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid}, Name: snap, Start: start}
	in.Approval = in.ApprovalPhrase()
	return in
}

// The approver is told what is lost and whether the snapshot has RAM.
func TestRollbackPlanSaysWhatIsLost(t *testing.T) {
	t.Parallel()
	e := newSnapshotAdminEnv(t, nil)
	for _, tc := range []struct {
		in   proxmoxsafe.RollbackSnapshotInput
		want []string
	}{
		{rollbackIn(113, "qemu", "with-ram", false), []string{"every change made since the snapshot", "running guest is stopped first", "includes RAM"}},
		{rollbackIn(113, "qemu", "disk-only", false), []string{"every change made since the snapshot", "has no RAM: the guest stays stopped"}},
		{rollbackIn(107, "qemu", "auto1", true), []string{"has no RAM: the guest is started afterwards", "APPROVE rollback pve1/qemu/107/auto1 start=1"}},
	} {
		in := tc.in
		in.Approval = ""
		_, err := e.client.RollbackSnapshot(t.Context(), in)
		var ae *proxmoxsafe.ApprovalError
		if !errors.As(err, &ae) {
			t.Fatalf("err = %v, want an approval error", err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", in.Name, err, w)
			}
		}
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}

// A rollback that fails inside the task: failed outcome, the current
// state still based on the old parent, audit says failed.
func TestRollbackTaskFailed(t *testing.T) {
	t.Parallel()
	e := newSnapshotAdminEnv(t, nil)
	const msg = "can't lock file '/var/lock/qemu-server/lock-107.conf' - got timeout"
	e.fake.FailNextTask(msg)
	in := rollbackIn(107, "qemu", "old-manual", false)
	in.Wait = fastVerify()
	r, err := e.client.RollbackSnapshot(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) {
		t.Fatalf("err = %v, want a task failure", err)
	}
	if r == nil || r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed || r.Outcome.Verified || r.Outcome.Observed != "current state based on auto3" {
		t.Fatalf("receipt = %+v", r)
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Errorf("audit events = %v", got)
	}
}
