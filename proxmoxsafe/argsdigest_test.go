package proxmoxsafe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestArgumentsDigest pins the documented encoding (domain, operation,
// canonical JSON without approval and plan) and what it does and does not
// depend on.
func TestArgumentsDigest(t *testing.T) {
	t.Parallel()
	in := proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", Description: "a <b>", VMState: true}
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
	in := proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", Description: "x", Approval: "anything"}
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

// TestGrantBindsArguments: a grant approved for one argument set does not
// approve a call with another on the same target, action and effect
// parameters (the snapshot's description); the call it was asked for
// still uses it, once.
func TestGrantBindsArguments(t *testing.T) {
	t.Parallel()
	store, err := proxmoxsafe.OpenGrantStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassSnapshot: {proxmoxsafe.LevelGrant}}
	})
	ask := func(desc string) (string, error) {
		_, err := e.client.SnapshotGuest(t.Context(), proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", Description: desc})
		var gr *proxmoxsafe.GrantRequiredError
		if errors.As(err, &gr) {
			return gr.Grant.Code, err
		}
		return "", err
	}
	code, err := ask("before the upgrade")
	if code == "" {
		t.Fatalf("first call: %v", err)
	}
	g, err := store.Decide(code, true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", Description: "before the upgrade"}); g.Arguments != want {
		t.Errorf("grant arguments %q, want %q", g.Arguments, want)
	}
	other, err := ask("something else")
	if other == "" || other == code {
		t.Fatalf("another description: code %q (approved %s), err %v", other, code, err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Fatalf("mutating requests after the refusal: %v", m)
	}
	if !strings.Contains(e.audit.String(), `"event":"refused"`) {
		t.Error("the refusal is not audited")
	}
	if c, err := ask("before the upgrade"); c != "" || err != nil {
		t.Fatalf("the approved call: code %q, %v", c, err)
	}
	if m := nonGET(e); len(m) != 1 {
		t.Fatalf("mutating requests = %v, want 1", m)
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
	store, err := proxmoxsafe.OpenGrantStore(t.TempDir(), nil)
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
	snap := proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", VMState: true}
	power := proxmoxsafe.GuestPowerInput{Node: "pve1", Type: "qemu", VMID: 100, Action: proxmoxsafe.ActionShutdown}
	snapPlan := snap
	snapPlan.Plan = true
	powerPlan := power
	powerPlan.Plan = true
	wantSnap := planOf(e.client.SnapshotGuest(ctx, snapPlan))
	wantPower := planOf(e.client.GuestPower(ctx, powerPlan))

	_, err = e.client.SnapshotGuest(ctx, snap)
	var gr *proxmoxsafe.GrantRequiredError
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
	in := proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre", Description: "before the upgrade", VMState: true}
	for b.Loop() {
		if _, err := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUseNonce: recording one answered elicitation in the grant
// directory (lock, read, atomic rewrite with fsync), in the steady state
// of a few live nonces: each one recorded here has expired long enough to
// be dropped by the next use. The file is rewritten whole, so the cost
// grows with the nonces alive at once (answers within 5 minutes).
func BenchmarkUseNonce(b *testing.B) {
	store, err := proxmoxsafe.OpenGrantStore(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	exp := time.Now().Add(-2 * time.Minute)
	i := 0
	for b.Loop() {
		i++
		if ok, err := store.UseNonce(strconv.Itoa(i), exp); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
