package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// plan: true runs every check, sends no mutating request, writes no audit
// record and returns what would be sent and the approval it needs; a
// refusal is still a refusal.
func TestMutationPlan(t *testing.T) {
	t.Parallel()
	e := newPowerExtraEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPowerExtra, proxmoxsafe.ClassSnapshotAdmin, proxmoxsafe.ClassPower}
	})
	ctx := t.Context()
	in := proxmoxsafe.SuspendGuestInput{Node: "pve1", Type: "qemu", VMID: 100, ToDisk: true, Controls: proxmoxsafe.Controls{Plan: true, Wait: fastVerify()}}
	r, err := e.client.SuspendGuest(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Plan
	if p == nil || r.UPID != "" || r.Outcome != nil || p.Method != "POST" || p.Path != "/nodes/pve1/qemu/100/status/suspend" ||
		p.Params["todisk"] != "1" || p.Approval != "APPROVE suspend pve1/qemu/100 todisk=1" || !strings.Contains(p.Effect, "hibernate") ||
		p.Class != proxmoxsafe.ClassPowerExtra || !slices.Equal(p.ApprovalLevels, []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}) || r.Before.Status != "running" {
		t.Errorf("plan receipt = %+v, plan %+v", r, p)
	}
	rb, err := e.client.RollbackSnapshot(ctx, proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 107}, Name: "auto1", Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil || rb.Plan == nil || !strings.Contains(rb.Plan.Effect, "is lost") || rb.Plan.Path != "/nodes/pve1/qemu/107/snapshot/auto1/rollback" {
		t.Errorf("rollback plan = %+v, %v", rb, err)
	}
	gp, err := e.client.GuestPower(ctx, proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Action: "stop", Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil || gp.Plan == nil || gp.Plan.Approval != "APPROVE stop pve1/qemu/100" {
		t.Errorf("power plan = %+v, %v", gp, err)
	}
	// A plan whose preconditions fail is refused like the real call.
	_, err = e.client.ResumeGuest(ctx, proxmoxsafe.ResumeGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Controls: proxmoxsafe.Controls{Plan: true}})
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) {
		t.Errorf("plan of an impossible resume: %v", err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
	if ev := auditSummary(t, e); len(ev) != 1 || !strings.HasPrefix(ev[0], "refused ") {
		t.Errorf("audit = %v, want only the refusal", ev)
	}
	// And after the plans the real call still goes through.
	in.Plan, in.Approval = false, p.Approval
	if r, err := e.client.SuspendGuest(ctx, in); err != nil || r.UPID == "" || r.Plan != nil {
		t.Errorf("suspend after the plan: %+v, %v", r, err)
	}
}
