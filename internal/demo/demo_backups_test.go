package demo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestDemoBackupWalkthrough: what docs/BACKUPS.md's walkthrough relies on
// in the demo (admin profile): backups on a PBS and an NFS storage, the
// daily job's last result failed (its pve2 run), guests no enabled job
// covers, a failed verification, and the recent-backup guard refusing
// build-runner's destroy while staging-app's passes it.
func TestDemoBackupWalkthrough(t *testing.T) {
	t.Parallel()
	cfg := parse(t, "--profile", "admin", "--recent-backup", "destroy=24h")
	lib, closers, err := Start(cfg, "v-test", &strings.Builder{})
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	lib.Policy.Classes = cfg.Classes()
	settings.ApplyProtect(&lib.Policy, cfg.Protect)
	lib.Audit = discardAudit{}
	lib.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
	for _, cl := range lib.Policy.Classes {
		lib.Policy.Approvals[cl] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}
	}
	client, err := proxmoxsafe.New(lib)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := client.BackupCoverage(t.Context(), proxmoxsafe.BackupCoverageInput{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[int]proxmoxsafe.GuestCoverage{}
	for _, g := range cov.Guests {
		by[g.VMID] = g
	}
	if g := by[100]; g.Storage != "pbs" || len(g.Findings) != 0 {
		t.Errorf("web-01 = %+v, want last night's pbs backup and no finding", g)
	}
	if g := by[101]; !slices.Contains(g.Findings, "last verification failed") {
		t.Errorf("web-02 = %+v", g)
	}
	if g := by[102]; g.Storage != "nas" {
		t.Errorf("db-01 = %+v, want the nas backup", g)
	}
	if g := by[103]; !slices.Contains(g.Findings, "not covered by an enabled job") || g.Storage != "local" {
		t.Errorf("build-runner = %+v", g)
	}
	jobs, err := client.ListBackupJobs(t.Context(), proxmoxsafe.ListBackupJobsInput{})
	if err != nil || len(jobs.Jobs) != 3 {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
	if j := jobs.Jobs[0]; j.ID != proxmoxtest.DemoDailyJob || j.LastResult != "failed" || len(j.LastRuns) != 2 {
		t.Errorf("daily = %+v", j)
	}
	if j := jobs.Jobs[1]; j.ID != proxmoxtest.DemoWeeklyJob || j.LastResult != "ok" || !slices.Equal(j.Guests, []int{102}) {
		t.Errorf("weekly = %+v", j)
	}
	if j := jobs.Jobs[2]; j.Enabled || j.LastResult != "not found" {
		t.Errorf("staging = %+v", j)
	}
	destroy := func(node string, vmid int) error {
		_, err := client.DestroyGuest(t.Context(), proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: proxmoxsafe.TypeQEMU, VMID: vmid}})
		return err
	}
	if err := destroy("pve2", 103); err == nil || !strings.Contains(err.Error(), "newest backup is") || !strings.Contains(err.Error(), "backup_create") {
		t.Errorf("build-runner's destroy: %v, want the guard's refusal", err)
	}
	if err := destroy("pve3", 107); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Errorf("staging-app's destroy: %v, want it past the guard (refused only for its approval)", err)
	}
}

type discardAudit struct{}

func (discardAudit) Record(context.Context, proxmoxsafe.AuditRecord) error { return nil }
