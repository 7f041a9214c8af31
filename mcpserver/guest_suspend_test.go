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
	// not set up; its own tests do (guest_destroy_test.go).
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
