package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Every refusal: the right error kind, "no action was taken", no mutating
// request, and no request at all when the input itself was invalid or the
// policy refused it.
func TestGuestPowerRefusals(t *testing.T) {
	t.Parallel()
	ok := func() proxmoxsafe.GuestPowerInput { return powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown) }
	with := func(f func(*proxmoxsafe.GuestPowerInput)) proxmoxsafe.GuestPowerInput {
		in := ok()
		f(&in)
		return in
	}
	// approve re-computes the phrase after the target changed, so only the
	// step under test refuses.
	approved := func(in proxmoxsafe.GuestPowerInput) proxmoxsafe.GuestPowerInput {
		in.Approval = in.ApprovalPhrase()
		return in
	}
	const (
		none     = iota // zero requests of any kind
		readOnly        // reads allowed, zero mutating
	)
	tests := []struct {
		name     string
		mod      func(*proxmoxsafe.Config)
		in       proxmoxsafe.GuestPowerInput
		kind     error
		requests int
		mention  string
	}{
		// validation
		{name: "empty node", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node: is required"},
		{name: "node traversal", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1/../../access" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node injection", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1;rm" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node lookalike", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve\u0031\u0307" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node too long", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = strings.Repeat("a", 256) }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node dot", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1.example" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "vmid zero", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 0 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "vmid 99", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 99 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid: must be a VMID from 100"},
		{name: "vmid negative", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = -100 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "vmid huge", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 1_000_000_000 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "type", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "openvz" }), kind: proxmoxsafe.ErrInvalidInput, mention: "type: must be one of: qemu, lxc"},
		{name: "type case", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "QEMU" }), kind: proxmoxsafe.ErrInvalidInput, mention: "type"},
		{name: "action", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "reset" }), kind: proxmoxsafe.ErrInvalidInput, mention: "action: must be one of: start, shutdown, reboot, stop"},
		{name: "approval too long", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = strings.Repeat("A", 300) }), kind: proxmoxsafe.ErrInvalidInput, mention: "approval"},
		// policy
		{name: "node not allowlisted", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve3"; i.VMID = 300 })), kind: proxmoxsafe.ErrNotAllowed, mention: `node "pve3" is not on the node allowlist`},
		{name: "empty allowlist", mod: func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = nil }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: "allowlist, which is empty"},
		{name: "class disabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot} }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: `"power" mutation class is not enabled`},
		{name: "read-only", mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: "read-only"},
		{name: "protected guest", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 106 })), kind: proxmoxsafe.ErrNotAllowed, mention: "guest 106 is protected"},
		// preconditions (one status/current read, no mutation)
		{name: "start running", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "start" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already running"},
		{name: "start paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "start"; i.VMID = 102 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "shutdown stopped", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 101 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "reboot stopped", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 101; i.Action = "reboot" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "stop stopped lxc", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve2"; i.Type = "lxc"; i.VMID = 201; i.Action = "stop" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "reboot paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 102; i.Action = "reboot" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "shutdown paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 102 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "template", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 103; i.Action = "start" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "template"},
		{name: "locked", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 104; i.Action = "stop" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "locked (backup)"},
		{name: "guest not on node", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve2" })), kind: proxmoxsafe.ErrNotFound, requests: readOnly, mention: "does not exist"},
		{name: "wrong type", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "lxc" })), kind: proxmoxsafe.ErrNotFound, requests: readOnly, mention: "does not exist"},
		// approval
		{name: "approval missing", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly, mention: `"APPROVE shutdown pve1/qemu/100"`},
		{name: "approval lower case", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "approve shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly, mention: "does not match"},
		{name: "approval extra space", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE  shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval trailing space", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval += " " }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval trailing newline", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval += "\n" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval zero width", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/qemu/\u200b100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval bidi", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "\u202eAPPROVE shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other vmid", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/qemu/101" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other node", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve2/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other action", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE stop pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other type", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/lxc/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval yes", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "yes" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval confirm=true", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "true" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.mod)
			rec, err := e.client.GuestPower(t.Context(), tc.in)
			if err == nil {
				t.Fatalf("not refused; receipt %+v", rec)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("err = %v, want kind %v", err, tc.kind)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("refusal leaks the secret: %v", err)
			}
			if !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("refusal does not say no action was taken: %v", err)
			}
			if tc.mention != "" && !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %v, want it to mention %q", err, tc.mention)
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after refusal: %v", reqLines(m))
			}
			if tc.requests == none {
				if r := e.requests(); len(r) != 0 {
					t.Errorf("requests after refusal: %v, want none", reqLines(r))
				}
			}
			if !strings.Contains(e.audit.String(), `"event":"refused"`) {
				t.Errorf("refusal not audited:\n%s", e.audit.String())
			}
			if strings.Contains(e.audit.String(), `"event":"approved"`) {
				t.Errorf("refusal audited as approved")
			}
		})
	}
}

func TestApprovalErrorTellsTheHuman(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)
	in.Approval = ""
	_, err := e.client.GuestPower(t.Context(), in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *ApprovalError", err)
	}
	if ae.Required != "APPROVE stop pve1/qemu/100" || ae.Given || ae.State.Status != "running" || ae.State.Name != "web1" {
		t.Errorf("approval error = %+v", ae)
	}
	if !strings.Contains(ae.Effect, "cut the power of VM 100 (web1) on pve1") {
		t.Errorf("effect = %q", ae.Effect)
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

func TestReadRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	checks := []struct {
		name string
		call func() error
		kind error
	}{
		{"node status bad node", func() error {
			_, err := e.client.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "../x"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"node status not allowlisted", func() error {
			_, err := e.client.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "pve3"})
			return err
		}, proxmoxsafe.ErrNotAllowed},
		{"list bad limit", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Limit: 1001})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list negative limit", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Limit: -1})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad type", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Type: "vm"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad status", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Status: "paused"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad tag", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Tag: "a;b"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list forged cursor", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Cursor: "djE6OTk"}) // "v1:99"
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list garbage cursor", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Cursor: "!!"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task bad upid", func() error {
			_, err := e.client.TaskStatus(ctx, proxmoxsafe.TaskStatusInput{Node: "pve1", UPID: "UPID:../../etc"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task node mismatch", func() error {
			_, err := e.client.TaskStatus(ctx, proxmoxsafe.TaskStatusInput{Node: "pve2", UPID: "UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task node not allowlisted", func() error {
			_, err := e.client.TaskStatus(ctx, proxmoxsafe.TaskStatusInput{Node: "pve3", UPID: "UPID:pve3:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:"})
			return err
		}, proxmoxsafe.ErrNotAllowed},
		{"wait bad upid", func() error {
			_, err := e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: "nope"}, nil)
			return err
		}, proxmoxsafe.ErrInvalidInput},
	}
	for _, c := range checks {
		err := c.call()
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		}
	}
	if r := e.requests(); len(r) != 0 {
		t.Errorf("refused reads sent requests: %v", reqLines(r))
	}
}
