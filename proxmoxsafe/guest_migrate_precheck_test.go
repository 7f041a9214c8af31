package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The approval refusal shows the effect and the precheck's answer.
func TestMigrateApprovalShowsPrecheck(t *testing.T) {
	t.Parallel()
	e := newMigrateEnv(t, "", nil)
	in := migrateIn("qemu", 105, "pve2", online)
	in.Approval = ""
	_, err := e.client.MigrateGuest(t.Context(), in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) || !strings.Contains(ae.Effect, "live migration") || !strings.Contains(ae.Effect, "precheck reports no blocker") ||
		!strings.Contains(ae.Effect, "hamigrate") {
		t.Errorf("err = %v", err)
	}
	if ae != nil && (ae.Plan == nil || ae.Plan.Precheck == nil || !ae.Plan.Precheck.Available) {
		t.Errorf("the refusal's plan lacks the precheck: %+v", ae.Plan)
	}
	if r := proxmoxsafe.ActionRisk("migrate"); !strings.Contains(r, "live migration") {
		t.Errorf("ActionRisk(migrate) = %q", r)
	}
}
