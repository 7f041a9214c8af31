package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestApprovalBindsParameters: an approval given for one parameter set is
// refused for another (an approval covers exactly what it names), with zero mutating requests, and the
// approver sees the parameters; the approved one is audited with them.
func TestApprovalBindsParameters(t *testing.T) {
	t.Parallel()
	plain := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "s1"}
	withMemory := plain
	withMemory.VMState = true
	for _, tc := range []struct {
		name     string
		approved proxmoxsafe.SnapshotGuestInput
		sent     proxmoxsafe.SnapshotGuestInput
	}{
		{"plain approval, memory requested", plain, withMemory},
		{"memory approval, plain requested", withMemory, plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := tc.sent
			in.Approval = tc.approved.ApprovalPhrase()
			_, err := e.client.SnapshotGuest(t.Context(), in)
			var ae *proxmoxsafe.ApprovalError
			if !errors.As(err, &ae) || ae.Required != tc.sent.ApprovalPhrase() || !ae.Given {
				t.Fatalf("err = %v, want an ApprovalError naming %q", err, tc.sent.ApprovalPhrase())
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after refusal: %v", reqLines(m))
			}
		})
	}
	t.Run("approved with memory", func(t *testing.T) {
		t.Parallel()
		var seen []proxmoxsafe.ApprovalParam
		e := newEnv(t, func(c *proxmoxsafe.Config) {
			useApprover(c, approverFunc(func(_ context.Context, req proxmoxsafe.ApprovalRequest) error {
				seen = req.Params
				return proxmoxsafe.PhraseApprover{}.Approve(t.Context(), req)
			}))
		})
		in := withMemory
		in.Approval = in.ApprovalPhrase()
		if _, err := e.client.SnapshotGuest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 || seen[0] != (proxmoxsafe.ApprovalParam{Name: "vmstate", Value: "1"}) {
			t.Errorf("approver saw params %v", seen)
		}
		if !strings.Contains(e.audit.String(), `"params":["vmstate=1"]`) {
			t.Errorf("audit log does not record the approved parameters:\n%s", e.audit.String())
		}
	})
}
