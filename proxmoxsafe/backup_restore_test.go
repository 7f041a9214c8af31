package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// restoreEnv is testCluster with the restore class (phrase level).
func restoreEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassRestore)
		if mod != nil {
			mod(c)
		}
	})
}

// The default backups of testCluster's "local": guest 100 (qemu, pve1)
// is the first, guest 200 (lxc, pve1) the eighth.
const (
	vm100Backup = "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"
	ct200Backup = "local:backup/vzdump-lxc-200-2026_01_01-07_00_00.tar.zst"
)

// TestRestoreBackupToNewGuest: the next free VMID is proposed and named
// in the phrase; the request is a create with archive (qemu) or
// ostemplate+restore=1 (lxc), unique=1, never force or start; the wait
// proves the new guest exists unlocked with the backed-up configuration.
func TestRestoreBackupToNewGuest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		archive string
		typ     proxmoxsafe.GuestType
		form    string
	}{
		{vm100Backup, proxmoxsafe.TypeQEMU, "archive=" + vm100Backup},
		{ct200Backup, proxmoxsafe.TypeLXC, "ostemplate=" + ct200Backup + " restore=1"},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			t.Parallel()
			e := restoreEnv(t, nil)
			in := proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: tc.archive}
			_, err := e.client.RestoreBackup(t.Context(), in)
			var ae *proxmoxsafe.ApprovalError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want the approval refusal", err)
			}
			want := "APPROVE restore pve1/" + string(tc.typ) + "/107 archive=" + tc.archive + " unique=1"
			if ae.Required != want || ae.Target.VMID != 107 {
				t.Fatalf("phrase = %q, want %q (the next free VMID)", ae.Required, want)
			}
			if !strings.Contains(ae.Effect, "no existing guest is touched") || !strings.Contains(ae.Effect, "new MAC addresses") {
				t.Errorf("effect = %q", ae.Effect)
			}
			if got := e.fake.MutatingRequests(); len(got) != 0 {
				t.Fatalf("mutating requests before approval: %v", reqLines(got))
			}
			in.VMID, in.Approval, in.Wait = 107, want, fastWait
			r, err := e.client.RestoreBackup(t.Context(), in)
			if err != nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted {
				t.Fatalf("RestoreBackup = %+v, %v", r, err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Path != "/nodes/pve1/"+string(tc.typ) {
				t.Fatalf("mutating requests = %v", reqLines(muts))
			}
			f := muts[0].Form
			for _, kv := range strings.Fields(tc.form + " vmid=107 unique=1") {
				k, v, _ := strings.Cut(kv, "=")
				if f.Get(k) != v {
					t.Errorf("form %s = %q, want %q (form %v)", k, f.Get(k), v, f)
				}
			}
			for _, k := range []string{"force", "start", "live-restore"} {
				if f.Has(k) {
					t.Errorf("form has %s", k)
				}
			}
			g, ok := e.fake.Guest(107)
			if !ok || g.Lock != "" || g.Status != "stopped" || g.Type != string(tc.typ) {
				t.Fatalf("restored guest = %+v, %v", g, ok)
			}
			src, _ := e.fake.Guest(map[proxmoxsafe.GuestType]int{proxmoxsafe.TypeQEMU: 100, proxmoxsafe.TypeLXC: 200}[tc.typ])
			if g.Name != src.Name || g.CPUs != src.CPUs {
				t.Errorf("restored %q/%d cpus, backed up %q/%d", g.Name, g.CPUs, src.Name, src.CPUs)
			}
		})
	}
}

// TestRestoreBackupRefusals: each refusal sends no mutating request.
func TestRestoreBackupRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		in      proxmoxsafe.RestoreBackupInput
		kind    error
		mention string
		noReq   bool
	}{
		{"class off", func(c *proxmoxsafe.Config) { c.Policy.Classes = c.Policy.Classes[:2] },
			proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 150}, proxmoxsafe.ErrNotAllowed, `"restore" mutation class`, true},
		{"VMID taken", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 100}, proxmoxsafe.ErrPrecondition, "VMID 100 is already in use", false},
		{"VMID protected", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 106}, proxmoxsafe.ErrNotAllowed, "protected", true},
		{"node not allowed", nil, proxmoxsafe.RestoreBackupInput{Node: "pve3", Archive: vm100Backup, VMID: 150}, proxmoxsafe.ErrNotAllowed, "pve3", true},
		{"backup not listed", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: "local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst", VMID: 150}, proxmoxsafe.ErrPrecondition, "is not listed on node pve1", false},
		{"storage without images", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 150, Storage: "local"}, proxmoxsafe.ErrPrecondition, `does not hold content "images"`, false},
		{"not a backup volume", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: "local:iso/x.iso", VMID: 150}, proxmoxsafe.ErrInvalidInput, "archive", true},
		{"stale phrase", nil, proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 150, Controls: proxmoxsafe.Controls{Approval: "APPROVE restore pve1/qemu/150 archive=" + vm100Backup + " unique=0"}},
			proxmoxsafe.ErrApprovalRequired, "unique=1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := restoreEnv(t, tc.mod)
			_, err := e.client.RestoreBackup(t.Context(), tc.in)
			assertRefusedNothingSent(t, e, err, tc.kind, tc.mention, tc.noReq)
		})
	}
}
