package proxmoxsafe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// TestArgumentsDigest pins the documented encoding (domain, operation,
// canonical JSON without approval and plan) and what it does and does not
// depend on.
func TestArgumentsDigest(t *testing.T) {
	t.Parallel()
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", Description: "a <b>", VMState: true}
	got, err := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, in)
	if err != nil {
		t.Fatal(err)
	}
	// Keys sorted, no space, omitempty zero values absent; encoding/json
	// escapes <, > and & in strings.
	canon := `{"description":"a \u003cb\u003e","node":"pve1","snapname":"pre","type":"qemu","vmid":100,"vmstate":true}`
	sum := sha256.Sum256([]byte("proxmox-safe-mcp/arguments/v1\nSnapshotGuest\n" + canon))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("digest %s, want %s (the documented encoding of %s)", got, want, canon)
	}
	same := func(name string, other any, op proxmoxsafe.Operation, wantSame bool) {
		t.Helper()
		d, err := proxmoxsafe.ArgumentsDigest(op, other)
		if err != nil {
			t.Fatal(err)
		}
		if (d == got) != wantSame {
			t.Errorf("%s: same digest = %t, want %t", name, d == got, wantSame)
		}
	}
	approved := in
	approved.Approval, approved.Plan, approved.Wait = "APPROVE snapshot pve1/qemu/100/pre vmstate=1", true, &proxmoxsafe.WaitOptions{}
	same("approval, plan and wait set", approved, proxmoxsafe.OpSnapshotGuest, true)
	same("a pointer to the input", &in, proxmoxsafe.OpSnapshotGuest, true)
	desc := in
	desc.Description = "a <c>"
	same("another description", desc, proxmoxsafe.OpSnapshotGuest, false)
	noState := in
	noState.VMState = false
	same("without vmstate", noState, proxmoxsafe.OpSnapshotGuest, false)
	same("another operation", in, proxmoxsafe.OpGuestPower, false)
	if _, err := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpGuestPower, func() {}); err == nil {
		t.Error("an input that does not encode has a digest")
	}
}

// TestApprovalRequestCarriesArguments: the pipeline gives every approver
// the digest of the validated input and the plan.
func TestApprovalRequestCarriesArguments(t *testing.T) {
	t.Parallel()
	var got proxmoxsafe.ApprovalRequest
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		useApprover(c, approverFunc(func(_ context.Context, req proxmoxsafe.ApprovalRequest) error {
			got = req
			return &proxmoxsafe.RefusalError{Kind: proxmoxsafe.ErrApprovalRequired, Reason: "test says no"}
		}))
	})
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", Description: "x", Controls: proxmoxsafe.Controls{Approval: "anything"}}
	_, err := e.client.SnapshotGuest(t.Context(), in)
	want, _ := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, in)
	if !errors.Is(err, proxmoxsafe.ErrApprovalRequired) || got.Arguments != want || got.Plan == nil || got.Plan.Path != "/nodes/pve1/qemu/100/snapshot" {
		t.Errorf("err %v, request %+v; want arguments %s and the plan", err, got, want)
	}
	var re *proxmoxsafe.RefusalError
	if !errors.As(err, &re) || !reflect.DeepEqual(re.Plan, got.Plan) {
		t.Errorf("the approver's refusal does not carry the plan: %#v", err)
	}
}

// TestApprovalRefusalCarriesPlan: without approval, with a wrong phrase,
// at the grant level and when no level can serve, the refusal carries the
// plan that plan: true returns for the same input and state.
func TestApprovalRefusalCarriesPlan(t *testing.T) {
	t.Parallel()
	unavailable := approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error {
		return proxmoxsafe.ErrApproverUnavailable
	})
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store, unavailable}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{
			proxmoxsafe.ClassSnapshot: {proxmoxsafe.LevelGrant},
			proxmoxsafe.ClassPower:    {"test"},
		}
	})
	ctx := t.Context()
	planOf := func(r *proxmoxsafe.Receipt, err error) *proxmoxsafe.Plan {
		t.Helper()
		if err != nil || r.Plan == nil {
			t.Fatalf("plan: %+v %v", r, err)
		}
		return r.Plan
	}
	snap := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", VMState: true}
	power := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Action: proxmoxsafe.ActionShutdown}
	snapPlan := snap
	snapPlan.Plan = true
	powerPlan := power
	powerPlan.Plan = true
	wantSnap := planOf(e.client.SnapshotGuest(ctx, snapPlan))
	wantPower := planOf(e.client.GuestPower(ctx, powerPlan))

	_, err = e.client.SnapshotGuest(ctx, snap)
	var gr *grant.RequiredError
	if !errors.As(err, &gr) || !reflect.DeepEqual(gr.Plan, wantSnap) || !reflect.DeepEqual(gr.Grant.Plan, wantSnap) {
		t.Errorf("grant refusal %#v, want the plan %+v", err, wantSnap)
	}
	_, err = e.client.GuestPower(ctx, power)
	var re *proxmoxsafe.RefusalError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "no approval level") || !reflect.DeepEqual(re.Plan, wantPower) {
		t.Errorf("no-level refusal %#v, want the plan %+v", err, wantPower)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Fatalf("mutating requests: %v", m)
	}

	phrase := newEnv(t, nil)
	wantPower = planOf(phrase.client.GuestPower(ctx, powerPlan))
	for _, given := range []string{"", "APPROVE shutdown pve1/qemu/101"} {
		in := power
		in.Approval = given
		_, err := phrase.client.GuestPower(ctx, in)
		var ae *proxmoxsafe.ApprovalError
		if !errors.As(err, &ae) || !reflect.DeepEqual(ae.Plan, wantPower) {
			t.Errorf("approval %q: %#v, want the plan %+v", given, err, wantPower)
		}
	}
	if m := nonGET(phrase); len(m) != 0 {
		t.Fatalf("mutating requests: %v", m)
	}
}

// BenchmarkArgumentsDigest: the digest every approval computes (once per
// approval request, not per read).
func BenchmarkArgumentsDigest(b *testing.B) {
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", Description: "before the upgrade", VMState: true}
	for b.Loop() {
		if _, err := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, in); err != nil {
			b.Fatal(err)
		}
	}
}
