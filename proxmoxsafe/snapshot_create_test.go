package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestSnapshotGuestHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   proxmoxsafe.SnapshotGuestInput
		form map[string]string
		task string
	}{
		{"qemu with vmstate", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre-upgrade", Description: "before the upgrade", VMState: true},
			map[string]string{"snapname": "pre-upgrade", "description": "before the upgrade", "vmstate": "1"}, "qmsnapshot"},
		{"qemu plain", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Name: "s1"},
			map[string]string{"snapname": "s1"}, "qmsnapshot"},
		{"lxc", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "after_fix", Description: "two\nlines"},
			map[string]string{"snapname": "after_fix", "description": "two\nlines"}, "vzsnapshot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := tc.in
			in.Approval = in.ApprovalPhrase()
			rec, err := e.client.SnapshotGuest(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Target.Snapshot != in.Name {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + in.Node + "/" + string(in.Type) + "/" + itoa(in.VMID) + "/snapshot"
			if len(mut) != 1 || reqLine(mut[0]) != want {
				t.Fatalf("mutating requests = %v, want %q", reqLines(mut), want)
			}
			got := map[string]string{}
			for k := range mut[0].Form {
				got[k] = mut[0].Form.Get(k)
			}
			if len(got) != len(tc.form) {
				t.Errorf("form = %v, want %v", got, tc.form)
			}
			for k, v := range tc.form {
				if got[k] != v {
					t.Errorf("form[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestSnapshotGuestRefusals(t *testing.T) {
	t.Parallel()
	base := func() proxmoxsafe.SnapshotGuestInput {
		return proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre-upgrade"}
	}
	with := func(f func(*proxmoxsafe.SnapshotGuestInput)) proxmoxsafe.SnapshotGuestInput {
		in := base()
		f(&in)
		if in.Approval == "" {
			in.Approval = in.ApprovalPhrase()
		}
		return in
	}
	tests := []struct {
		name      string
		mod       func(*proxmoxsafe.Config)
		in        proxmoxsafe.SnapshotGuestInput
		kind      error
		noRequest bool
		mention   string
	}{
		{name: "name with space", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "a b" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true, mention: "snapname"},
		{name: "name traversal", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "../x" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "name one char", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "a" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "name digit first", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "1abc" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "name 41 chars", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "a" + strings.Repeat("b", 40) }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "reserved current", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "Current" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true, mention: "reserves"},
		{name: "reserved pending qemu", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Name = "pending" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "reserved vzdump lxc", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Type = "lxc"; i.VMID = 200; i.Name = "vzdump" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "vmstate on lxc", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Type = "lxc"; i.VMID = 200; i.VMState = true }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true, mention: "vmstate: is only supported for qemu"},
		{name: "description control chars", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Description = "ok\x1b[2Jcleared" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true, mention: "description"},
		{name: "description bidi", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Description = "a\u202eb" }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "description too long", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Description = strings.Repeat("x", 1025) }), kind: proxmoxsafe.ErrInvalidInput, noRequest: true},
		{name: "class disabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} }, in: with(func(*proxmoxsafe.SnapshotGuestInput) {}), kind: proxmoxsafe.ErrNotAllowed, noRequest: true},
		{name: "protected", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.VMID = 106 }), kind: proxmoxsafe.ErrNotAllowed, noRequest: true},
		{name: "node not allowed", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Node = "pve3"; i.VMID = 300 }), kind: proxmoxsafe.ErrNotAllowed, noRequest: true},
		{name: "template", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.VMID = 103 }), kind: proxmoxsafe.ErrPrecondition, mention: "template"},
		{name: "locked", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.VMID = 104 }), kind: proxmoxsafe.ErrPrecondition, mention: "locked"},
		{name: "duplicate name", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Type = "lxc"; i.VMID = 200; i.Name = "before" }), kind: proxmoxsafe.ErrPrecondition, mention: "already has a snapshot named before"},
		{name: "approval for other snapshot", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Approval = "APPROVE snapshot pve1/qemu/100/other" }), kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE snapshot pve1/qemu/100/pre-upgrade"},
		// Issue 15 §2: every parameter that changes the effect is approved.
		{name: "plain approval for vmstate", in: with(func(i *proxmoxsafe.SnapshotGuestInput) {
			i.Approval = "APPROVE snapshot pve1/qemu/100/pre-upgrade"
			i.VMState = true
		}), kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE snapshot pve1/qemu/100/pre-upgrade vmstate=1"},
		{name: "vmstate approval for plain", in: with(func(i *proxmoxsafe.SnapshotGuestInput) {
			i.Approval = "APPROVE snapshot pve1/qemu/100/pre-upgrade vmstate=1"
		}), kind: proxmoxsafe.ErrApprovalRequired},
		{name: "power phrase for snapshot", in: with(func(i *proxmoxsafe.SnapshotGuestInput) { i.Approval = "APPROVE snapshot pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.mod)
			rec, err := e.client.SnapshotGuest(t.Context(), tc.in)
			if err == nil {
				t.Fatalf("not refused; receipt %+v", rec)
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("err = %v, want kind %v saying no action was taken", err, tc.kind)
			}
			if tc.mention != "" && !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %v, want it to mention %q", err, tc.mention)
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after refusal: %v", reqLines(m))
			}
			if r := e.requests(); tc.noRequest && len(r) != 0 {
				t.Errorf("requests after refusal: %v, want none", reqLines(r))
			}
		})
	}
}

func TestWaitSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "pre-upgrade"}
	in.Approval = in.ApprovalPhrase()
	in.Wait = fastVerify()
	r, err := e.client.SnapshotGuest(t.Context(), in)
	if err != nil {
		t.Fatalf("SnapshotGuest: %v", err)
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != "snapshot pre-upgrade present" || o.After != nil {
		t.Errorf("outcome = %+v", o)
	}
	recs := auditEvents(t, e)
	if last := recs[len(recs)-1]; last.Event != proxmoxsafe.AuditCompleted || last.Op != "SnapshotGuest" || last.Snapshot != "pre-upgrade" {
		t.Errorf("last record = %+v", last)
	}
	var listed bool
	for _, q := range e.requests() {
		listed = listed || (q.Method == "GET" && q.Path == "/nodes/pve1/lxc/200/snapshot")
	}
	if !listed {
		t.Error("the snapshot list was never read")
	}
}

func TestWaitSnapshotFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.FailNextTask("snapshot feature is not available")
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "pre-upgrade"}
	in.Approval = in.ApprovalPhrase()
	in.Wait = fastVerify()
	r, err := e.client.SnapshotGuest(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || r == nil {
		t.Fatalf("err = %v, receipt %v", err, r)
	}
	if o := r.Outcome; o.Status != proxmoxsafe.OutcomeFailed || o.Observed != "snapshot pre-upgrade not in the snapshot list" {
		t.Errorf("outcome = %+v", o)
	}
}
