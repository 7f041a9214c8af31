package proxmoxsafe_test

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// deleteBackupEnv is infraCluster with the destroy class at the phrase
// level (its default needs a person).
func deleteBackupEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnvWith(t, infraCluster(), func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassDestroy)
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}
		if mod != nil {
			mod(c)
		}
	})
}

// infraCluster's "local" backups: 100 nightly, 100 protected, 200.
const (
	nightly100   = "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"
	protected100 = "local:backup/vzdump-qemu-100-2026_01_02-00_00_00.vma.zst"
)

// TestDeleteBackupWaits: the phrase names the volume; the one DELETE has
// the volume's "/" as a path separator and no query; the wait proves the
// volume is no longer listed.
func TestDeleteBackupWaits(t *testing.T) {
	t.Parallel()
	e := deleteBackupEnv(t, nil)
	in := proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: nightly100}
	if want := "APPROVE delete-backup pve1/qemu/100 volume=" + nightly100; in.ApprovalPhrase() != want {
		t.Fatalf("phrase = %q, want %q", in.ApprovalPhrase(), want)
	}
	in.Approval, in.Wait = in.ApprovalPhrase(), fastWait
	r, err := e.client.DeleteBackup(t.Context(), in)
	if err != nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted || r.Task.Type != "imgdel" || r.Task.ID != "100@local" {
		t.Fatalf("DeleteBackup = %+v, %v", r, err)
	}
	muts := e.fake.MutatingRequests()
	if len(muts) != 1 || muts[0].Method != "DELETE" || muts[0].RawPath != "/nodes/pve1/storage/local/content/"+nightly100 || len(muts[0].Query) != 0 {
		t.Fatalf("mutating requests = %+v", muts)
	}
	list, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local", VMID: 100})
	if err != nil || list.Total != 1 || list.Backups[0].VolID != protected100 {
		t.Fatalf("after: %+v, %v", list, err)
	}
}

// TestDeleteBackupRefusals: a protected backup (Proxmox's reason), a
// backup not listed, a protected guest's backup, the class off, a stale
// phrase: nothing mutating is sent.
func TestDeleteBackupRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		in      proxmoxsafe.DeleteBackupInput
		kind    error
		mention string
		noReq   bool
	}{
		{"protected backup", nil, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: protected100}, proxmoxsafe.ErrPrecondition,
			"cannot remove protected volume 'backup/vzdump-qemu-100-2026_01_02-00_00_00.vma.zst' on 'local'", false},
		{"not listed", nil, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: "local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst"}, proxmoxsafe.ErrPrecondition, "is not listed", false},
		{"protected guest", func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{100} }, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: nightly100}, proxmoxsafe.ErrNotAllowed, "protected", true},
		{"class off", func(c *proxmoxsafe.Config) { c.Policy.Classes = c.Policy.Classes[:2] }, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: nightly100}, proxmoxsafe.ErrNotAllowed, `"destroy" mutation class`, true},
		{"stale phrase", nil, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: nightly100, Controls: proxmoxsafe.Controls{Approval: "APPROVE delete-backup pve1/qemu/100 volume=" + protected100}},
			proxmoxsafe.ErrApprovalRequired, nightly100, false},
		{"not a backup", nil, proxmoxsafe.DeleteBackupInput{Node: "pve1", Volume: "local-lvm:vm-100-disk-0"}, proxmoxsafe.ErrInvalidInput, "volume", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := deleteBackupEnv(t, tc.mod)
			_, err := e.client.DeleteBackup(t.Context(), tc.in)
			assertRefusedNothingSent(t, e, err, tc.kind, tc.mention, tc.noReq)
		})
	}
}

var _ = proxmoxtest.DefaultTokenID
