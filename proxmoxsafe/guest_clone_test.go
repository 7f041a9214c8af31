package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestProvisionNextID: without a VMID the next free one is proposed in
// the phrase; the approving call with the same input uses it.
func TestProvisionNextID(t *testing.T) {
	t.Parallel()
	e := newProvisionEnv(t, nil)
	in := proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, Name: "auto"}
	_, err := e.client.CloneGuest(t.Context(), in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) || ae.Required != "APPROVE clone pve1/qemu/9000 newid=107 full=1 name=auto" {
		t.Fatalf("err = %v, want the phrase naming newid=107", err)
	}
	if n := len(e.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests after the refusal", n)
	}
	in.Approval = ae.Required
	in.Wait = fastVerify()
	r, err := e.client.CloneGuest(t.Context(), in)
	if err != nil || r.NewGuest.VMID != 107 || r.Outcome.Status != proxmoxsafe.OutcomeCompleted {
		t.Fatalf("receipt = %+v, err = %v", r, err)
	}
	if f := e.fake.MutatingRequests()[0].Form; f.Get("newid") != "107" {
		t.Errorf("form = %v", f)
	}
}

// TestProvisionTaskFailure: a clone that fails inside its task is
// reported failed, the half-made guest is gone, the audit says failed.
func TestProvisionTaskFailure(t *testing.T) {
	t.Parallel()
	e := newProvisionEnv(t, nil)
	e.fake.FailNextTask("clone failed: storage migration failed: out of space")
	in := approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123})
	in.Wait = fastVerify()
	r, err := e.client.CloneGuest(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || r == nil || r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed || r.Outcome.Verified {
		t.Fatalf("receipt = %+v, err = %v; want a failed outcome", r, err)
	}
	if !strings.Contains(r.Outcome.Message, "out of space") || !strings.Contains(r.Outcome.Observed, "not in the cluster resources") {
		t.Errorf("outcome = %+v", r.Outcome)
	}
	if _, ok := e.fake.Guest(123); ok {
		t.Error("the failed clone's guest is still in the fake")
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Errorf("audit events = %v", got)
	}
}
