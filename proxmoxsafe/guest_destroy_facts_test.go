package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestDestroyDiskAddedDuringApproval: a disk attached while a person was
// approving is not destroyed under an approval that never listed it. The
// guest's state is the same (stopped, unlocked); only what the precondition
// reads beyond it changed, so the effect the person saw is compared.
func TestDestroyDiskAddedDuringApproval(t *testing.T) {
	t.Parallel()
	var e *env
	slow := approverFunc(func(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
		changeGuest(e.fake, 120, func(g *proxmoxtest.Guest) { g.Config["scsi2"] = "local-lvm:vm-120-disk-7,size=500G" })
		return proxmoxsafe.PhraseApprover{}.Approve(ctx, req)
	})
	e = newDestroyEnv(t, func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{slow}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.ApprovalLevel(slow.Name())}}
	})
	_, err := e.client.DestroyGuest(t.Context(), destroyIn("qemu", 120, false, true))
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "changed while the approval was pending") || !strings.Contains(err.Error(), "500G") {
		t.Fatalf("err = %v, want a refusal naming the changed effect", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests after the refusal: %v", reqLines(m))
	}
	if audit := e.audit.String(); !strings.Contains(audit, `"event":"refused"`) || strings.Contains(audit, `"event":"approved"`) {
		t.Errorf("audit log:\n%s", audit)
	}
}
