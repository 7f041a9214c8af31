package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func cleanupIn(vmid int, typ proxmoxsafe.GuestType, apply bool) proxmoxsafe.CleanupSnapshotsInput {
	return proxmoxsafe.CleanupSnapshotsInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid},
		Apply:    apply,
		Approval: proxmoxsafe.ApprovalPhrase("snapshot-cleanup", guestTarget("pve1", typ, vmid)),
	}
}

func TestCleanupSnapshotsDryRun(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", false))
	if err != nil {
		t.Fatal(err)
	}
	// old-manual by age; then 5 remain (keep-golden, auto1, auto2, manual1,
	// auto3) for a maximum of 3: manual1 first, then the oldest automatic.
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Rule)+":"+string(s.Status))
	}
	want := []string{"old-manual:max-age:planned", "manual1:max-count:planned", "auto1:max-count:planned"}
	if !slices.Equal(steps, want) || res.Applied || res.Deleted != 0 {
		t.Errorf("steps = %v (applied %v, deleted %d), want %v", steps, res.Applied, res.Deleted, want)
	}
	if !strings.Contains(res.Message, "Dry run") || !strings.Contains(res.Message, "nothing was changed") {
		t.Errorf("message = %q", res.Message)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("a dry run sent %v", m)
	}
	if ev := auditSummary(t, e); len(ev) != 0 {
		t.Errorf("a dry run wrote audit records: %v", ev)
	}
}

// apply deletes one snapshot at a time, each only after the previous
// deletion's task was seen stopped, in the plan's order.
func TestCleanupSnapshotsApply(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 3 || !res.Applied {
		t.Fatalf("result = %+v", res)
	}
	g, _ := e.fake.Guest(200)
	var left []string
	for _, s := range g.Snapshots {
		left = append(left, s.Name)
	}
	if !slices.Equal(left, []string{"keep-golden", "auto2", "auto3"}) {
		t.Errorf("snapshots left = %v", left)
	}
	// Order: each DELETE comes after a task status read that saw the
	// previous deletion's task stopped.
	tasks := e.fake.Tasks()
	var deletes []string
	lastDelete := -1
	for i, r := range e.requests() {
		if r.Method != "DELETE" {
			continue
		}
		deletes = append(deletes, r.Path)
		if lastDelete >= 0 {
			prev := tasks[len(deletes)-2]
			sawStopped := false
			for _, q := range e.requests()[lastDelete:i] {
				if q.Method == "GET" && strings.Contains(q.RawPath, "/tasks/") && strings.HasSuffix(q.Path, "/status") && strings.Contains(q.Path, prev.UPID) {
					sawStopped = true
				}
			}
			if !sawStopped || prev.EndTime == 0 || prev.EndTime > tasks[len(deletes)-1].StartTime {
				t.Errorf("DELETE %s was sent before task %s was seen stopped", r.Path, prev.UPID)
			}
		}
		lastDelete = i
	}
	wantDel := []string{"/nodes/pve1/lxc/200/snapshot/old-manual", "/nodes/pve1/lxc/200/snapshot/manual1", "/nodes/pve1/lxc/200/snapshot/auto1"}
	if !slices.Equal(deletes, wantDel) {
		t.Errorf("DELETEs = %v, want %v", deletes, wantDel)
	}
	if got := nonGET(e); len(got) != 3 {
		t.Errorf("non-GET requests = %v, want only the three DELETEs", got)
	}
	var want []string
	for _, s := range []string{"old-manual", "manual1", "auto1"} {
		for _, ev := range []string{"approved", "submitted", "completed"} {
			want = append(want, ev+" CleanupSnapshots delsnapshot 200/"+s)
		}
	}
	if ev := auditSummary(t, e); !slices.Equal(ev, want) {
		t.Errorf("audit = %v\nwant %v", ev, want)
	}
}

// A failed deletion stops the run and the result says what was and was
// not deleted.
func TestCleanupSnapshotsStopsOnFailure(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// The first deletion succeeds (with a warning), the second fails
	// inside its task.
	e2 := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	e2.fake.FailNextTask("WARNINGS: 1")
	e2.fake.FailNextTask("zfs error: could not find any snapshots to destroy; check snapshot names.")
	res, err := e2.client.CleanupSnapshots(ctx, cleanupIn(200, "lxc", true))
	var te *proxmoxsafe.TaskError
	if !errors.As(err, &te) || !errors.Is(err, proxmoxsafe.ErrTaskFailed) {
		t.Fatalf("err = %v, want a *TaskError", err)
	}
	if res == nil {
		t.Fatal("no result after a failed deletion")
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Status))
	}
	if want := []string{"old-manual:deleted", "manual1:failed", "auto1:not_attempted"}; !slices.Equal(steps, want) {
		t.Errorf("steps = %v, want %v", steps, want)
	}
	if res.Deleted != 1 || !strings.Contains(res.Message, "Stopped after 1 deletion") || !strings.Contains(res.Message, "1 not attempted") {
		t.Errorf("deleted %d, message %q", res.Deleted, res.Message)
	}
	if got := nonGET(e2); len(got) != 2 {
		t.Errorf("non-GET requests = %v, want two DELETEs", got)
	}
	ev := auditSummary(t, e2)
	if len(ev) != 6 || ev[5] != "failed CleanupSnapshots delsnapshot 200/manual1" {
		t.Errorf("audit = %v", ev)
	}
	g, _ := e2.fake.Guest(200)
	if len(g.Snapshots) != 5 {
		t.Errorf("%d snapshots left, want 5", len(g.Snapshots))
	}
}

// auditHook runs a function after every audit record it stores: a test's
// way to act between the steps of a run.
type auditHook struct {
	next proxmoxsafe.AuditSink
	fn   func(proxmoxsafe.AuditRecord)
}

func (h auditHook) Record(ctx context.Context, r proxmoxsafe.AuditRecord) error {
	err := h.next.Record(ctx, r)
	h.fn(r)
	return err
}

// A snapshot that gains a keep marker between the plan and its turn is
// skipped, and one that vanished too; the run goes on.
func TestCleanupSkipsChangedSnapshots(t *testing.T) {
	t.Parallel()
	var fake *proxmoxtest.Server
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Retention.MaxCount = 3
		c.Audit = auditHook{next: c.Audit, fn: func(r proxmoxsafe.AuditRecord) {
			if r.Event != proxmoxsafe.AuditCompleted || r.Snapshot != "old-manual" {
				return
			}
			// After the first deletion: someone marks manual1 "keep" and
			// deletes auto1 by hand.
			fake.Update(func(c *proxmoxtest.Cluster) {
				for _, g := range c.Guests {
					if g.VMID != 200 {
						continue
					}
					var kept []*proxmoxtest.Snapshot
					for _, s := range g.Snapshots {
						if s.Name == "manual1" {
							s.Description = "KEEP for the audit"
						}
						if s.Name != "auto1" {
							kept = append(kept, s)
						}
					}
					g.Snapshots = kept
				}
			})
		}}
	})
	fake = e.fake
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", true))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Status))
	}
	if want := []string{"old-manual:deleted", "manual1:skipped", "auto1:skipped"}; !slices.Equal(steps, want) {
		t.Errorf("steps = %v, want %v", steps, want)
	}
	if got := nonGET(e); len(got) != 1 {
		t.Errorf("non-GET requests = %v, want one DELETE", got)
	}
}
