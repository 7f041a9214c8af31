package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func adminFixture(t *testing.T, pv string) *fixture {
	t.Helper()
	classes, err := proxmoxsafe.ProfileAdmin.Classes()
	if err != nil {
		t.Fatal(err)
	}
	// destroy defaults to elicit,grant, whose approvers this fixture does
	// not set up; its own tests do (destroy_tools_test.go).
	pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: classes,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}}
	return newFixture(t, t.Context(), pv, fixtureConfig{policy: &pol})
}

// guest_suspend without approval refuses with the phrase that binds
// todisk, sends nothing mutating; with that phrase it hibernates the VM,
// and guest_resume brings it back, both verified.
func TestGuestSuspendResumeTools(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := adminFixture(t, pv)
			ctx := t.Context()
			args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "todisk": true, "wait": true}
			res := f.call(t, ctx, ToolGuestSuspend, args)
			if !res.IsError || !strings.Contains(text(t, res), "APPROVE suspend pve1/qemu/100 todisk=1") {
				t.Fatalf("without approval: %v %q", res.IsError, text(t, res))
			}
			if m := f.fake.MutatingRequests(); len(m) != 0 {
				t.Fatalf("mutating requests after a refusal: %v", m)
			}
			args["approval"] = "APPROVE suspend pve1/qemu/100 todisk=1"
			res = f.call(t, ctx, ToolGuestSuspend, args)
			if res.IsError || !strings.Contains(text(t, res), "Suspend to disk of VM 100") {
				t.Fatalf("suspend: %q", text(t, res))
			}
			m := f.fake.MutatingRequests()
			if len(m) != 1 || m[0].Path != "/nodes/pve1/qemu/100/status/suspend" || m[0].Form.Get("todisk") != "1" {
				t.Fatalf("mutating requests = %+v", m)
			}
			var r proxmoxsafe.Receipt
			structured(t, res, &r)
			if r.Task.Type != "qmsuspend" || r.Outcome == nil || !r.Outcome.Verified {
				t.Errorf("receipt = %+v", r)
			}
			res = f.call(t, ctx, ToolGuestResume, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "wait": true, "approval": "APPROVE resume pve1/qemu/100"})
			if res.IsError {
				t.Fatalf("resume: %q", text(t, res))
			}
			structured(t, res, &r)
			if r.Task.Type != "qmresume" || r.Outcome == nil || !r.Outcome.Verified || r.Outcome.After.Status != "running" {
				t.Errorf("resume receipt = %+v", r)
			}
			var events []string
			for _, rec := range f.audit.records(t) {
				events = append(events, string(rec.Event)+" "+string(rec.Op))
			}
			want := "refused SuspendGuest,approved SuspendGuest,submitted SuspendGuest,completed SuspendGuest,approved ResumeGuest,submitted ResumeGuest,completed ResumeGuest"
			if got := strings.Join(events, ","); got != want {
				t.Errorf("audit = %s, want %s", got, want)
			}
		})
	}
}

// snapshot_rollback refuses without approval and says what is lost; with
// the phrase it rolls back (verified), and snapshot_delete deletes.
func TestSnapshotRollbackDeleteTools(t *testing.T) {
	t.Parallel()
	f := adminFixture(t, "")
	ctx := t.Context()
	args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "pre-upgrade", "wait": true}
	res := f.call(t, ctx, ToolSnapshotRollback, args)
	if txt := text(t, res); !res.IsError || !strings.Contains(txt, "APPROVE rollback pve1/qemu/100/pre-upgrade") || !strings.Contains(txt, "is lost") || !strings.Contains(txt, "has no RAM") {
		t.Fatalf("without approval: %v %q", res.IsError, txt)
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Fatalf("mutating requests after a refusal: %v", m)
	}
	args["approval"] = "APPROVE rollback pve1/qemu/100/pre-upgrade"
	res = f.call(t, ctx, ToolSnapshotRollback, args)
	if res.IsError {
		t.Fatalf("rollback: %q", text(t, res))
	}
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if r.Task.Type != "qmrollback" || r.Outcome == nil || !r.Outcome.Verified || r.Outcome.Observed != "current state based on pre-upgrade" {
		t.Errorf("rollback receipt = %+v", r)
	}
	res = f.call(t, ctx, ToolSnapshotDelete, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "weekly-2025-01", "wait": true,
		"approval": "APPROVE delsnapshot pve1/qemu/100/weekly-2025-01"})
	if res.IsError {
		t.Fatalf("delete: %q", text(t, res))
	}
	structured(t, res, &r)
	if r.Task.Type != "qmdelsnapshot" || r.Outcome == nil || !r.Outcome.Verified {
		t.Errorf("delete receipt = %+v", r)
	}
	m := f.fake.MutatingRequests()
	if len(m) != 2 || m[0].Method != "POST" || m[0].Path != "/nodes/pve1/qemu/100/snapshot/pre-upgrade/rollback" || m[1].Method != "DELETE" || m[1].Path != "/nodes/pve1/qemu/100/snapshot/weekly-2025-01" {
		t.Errorf("mutating requests = %+v", m)
	}
}

// plan: true through a tool: the plan in text and structured content,
// nothing mutating sent.
func TestToolPlan(t *testing.T) {
	t.Parallel()
	f := adminFixture(t, "")
	res := f.call(t, t.Context(), ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop", "plan": true})
	txt := text(t, res)
	if res.IsError || !strings.Contains(txt, "Plan only") || !strings.Contains(txt, "POST /nodes/pve1/qemu/100/status/stop") || !strings.Contains(txt, `"APPROVE stop pve1/qemu/100"`) {
		t.Fatalf("plan: %v %q", res.IsError, txt)
	}
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if r.Plan == nil || r.UPID != "" {
		t.Errorf("receipt = %+v", r)
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}
