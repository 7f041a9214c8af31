package proxmoxsafe_test

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// pbsEnv is testCluster with a shared Proxmox Backup Server storage
// holding a verified, protected backup of VM 100 and a failed one of
// container 200, and the backup, restore and destroy classes (phrase).
func pbsEnv(t *testing.T) *env {
	t.Helper()
	c := testCluster()
	c.Storages = append(proxmoxtest.DefaultStorages(c), &proxmoxtest.Storage{ID: "pbs", Type: "pbs", Content: []string{"backup"}, Shared: true,
		Total: 1 << 40, Config: map[string]string{"server": "192.0.2.50", "datastore": "store1"},
		Backups: []*proxmoxtest.Backup{
			{VMID: 100, Type: "qemu", CTime: 1767225600, Size: 4 << 30, Protected: true, Verification: "ok", Notes: "web1"},
			{VMID: 200, Type: "lxc", CTime: 1767229200, Size: 1 << 30, Verification: "failed", Encrypted: "aa:bb"},
		}})
	return newEnvWith(t, c, func(cfg *proxmoxsafe.Config) {
		cfg.Policy.Classes = append(cfg.Policy.Classes, proxmoxsafe.ClassBackup, proxmoxsafe.ClassRestore, proxmoxsafe.ClassDestroy)
		cfg.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}
	})
}

// TestBackupsOnPBS: backup_list, backup_create, backup_restore,
// backup_delete and coverage work on a pbs storage as on a file storage,
// with PBS's volume names and formats, verification state and protected.
func TestBackupsOnPBS(t *testing.T) {
	t.Parallel()
	e := pbsEnv(t)
	ctx := t.Context()
	list, err := e.client.ListBackups(ctx, proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "pbs"})
	if err != nil || list.Total != 2 {
		t.Fatalf("ListBackups = %+v, %v", list, err)
	}
	ct, vm := list.Backups[0], list.Backups[1]
	if vm.VolID != "pbs:backup/vm/100/2026-01-01T00:00:00Z" || vm.Format != "pbs-vm" || vm.Verification != "ok" || !vm.Protected {
		t.Errorf("vm backup = %+v", vm)
	}
	if ct.VolID != "pbs:backup/ct/200/2026-01-01T01:00:00Z" || ct.Format != "pbs-ct" || ct.Verification != "failed" || !ct.Encrypted {
		t.Errorf("ct backup = %+v", ct)
	}
	in := proxmoxsafe.BackupGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Storage: "pbs"}
	in.Approval, in.Wait = in.ApprovalPhrase(), fastWait
	r, err := e.client.BackupGuest(ctx, in)
	if err != nil || !strings.HasPrefix(r.VolID, "pbs:backup/vm/101/") {
		t.Fatalf("BackupGuest to pbs = %+v, %v", r, err)
	}
	rin := proxmoxsafe.RestoreBackupInput{Node: "pve2", Archive: vm.VolID, VMID: 160}
	rin.Approval, rin.Wait = rin.ApprovalPhrase(0), fastWait
	if _, err := e.client.RestoreBackup(ctx, rin); err != nil {
		t.Fatalf("RestoreBackup from pbs: %v", err)
	}
	if g, ok := e.fake.Guest(160); !ok || g.Node != "pve2" || g.Name != "web1" {
		t.Errorf("restored = %+v, %v", g, ok)
	}
	_, err = e.client.DeleteBackup(ctx, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: vm.VolID, Controls: proxmoxsafe.Controls{Approval: "x"}})
	if err == nil || !strings.Contains(err.Error(), "cannot remove protected volume 'backup/vm/100/2026-01-01T00:00:00Z' on 'pbs'") {
		t.Errorf("delete of the protected PBS backup: %v", err)
	}
	din := proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: ct.VolID}
	din.Approval, din.Wait = din.ApprovalPhrase(), fastWait
	if r, err := e.client.DeleteBackup(ctx, din); err != nil || r.Task.ID != "200@pbs" {
		t.Fatalf("DeleteBackup on pbs = %+v, %v", r, err)
	}
	cov, err := e.client.BackupCoverage(ctx, proxmoxsafe.BackupCoverageInput{VMID: 100})
	if err != nil || len(cov.Guests) != 1 || cov.Guests[0].Newest == nil {
		t.Fatalf("coverage = %+v, %v", cov, err)
	}
}
