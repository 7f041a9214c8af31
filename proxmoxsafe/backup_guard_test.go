package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// guardEnv is the destroy test cluster with a backup storage holding a
// backup of 120 from ageOf ago (none when ageOf is 0), the classes
// destroy, snapshot-admin and config, and the recent-backup guard at
// maxAge for each.
func guardEnv(t *testing.T, ageOf time.Duration, maxAge time.Duration) *env {
	t.Helper()
	c := destroyTestCluster()
	c.Guests[0].Config["scsi0"] = "local-lvm:vm-120-disk-3,size=8G"
	st := &proxmoxtest.Storage{ID: "nas", Type: "nfs", Shared: true, Content: []string{"backup"}}
	if ageOf > 0 {
		st.Backups = []*proxmoxtest.Backup{
			{VMID: 120, Type: "qemu", CTime: time.Now().Add(-ageOf).Unix(), Size: 1 << 30},
			{VMID: 120, Type: "qemu", CTime: time.Now().Add(-ageOf - 72*time.Hour).Unix(), Size: 1 << 30},
		}
	}
	c.Storages = []*proxmoxtest.Storage{st,
		{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Total: 100 << 30}}
	return newEnvWith(t, c, func(cfg *proxmoxsafe.Config) {
		cfg.Policy = proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1", "pve2"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassDestroy, proxmoxsafe.ClassSnapshotAdmin, proxmoxsafe.ClassConfig},
			Approvals:    map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}},
			RecentBackup: map[proxmoxsafe.Class]time.Duration{
				proxmoxsafe.ClassDestroy: maxAge, proxmoxsafe.ClassSnapshotAdmin: maxAge, proxmoxsafe.ClassConfig: maxAge},
		}
	})
}

// TestRecentBackupGuardRefuses: with the guard on, a destroy, a rollback,
// a config change and a disk resize of a guest whose newest backup is too
// old, or that has none, are refused before any approval, naming the
// newest backup and the tool to run, with no mutating request and one
// refused audit record.
func TestRecentBackupGuardRefuses(t *testing.T) {
	t.Parallel()
	calls := map[string]func(c *proxmoxsafe.Client, e *env) error{
		"destroy": func(c *proxmoxsafe.Client, e *env) error {
			_, err := c.DestroyGuest(t.Context(), destroyIn("qemu", 120, false, false))
			return err
		},
		"rollback": func(c *proxmoxsafe.Client, e *env) error {
			in := proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Name: "s2"}
			in.Approval = in.ApprovalPhrase()
			_, err := c.RollbackSnapshot(t.Context(), in)
			return err
		},
		"config": func(c *proxmoxsafe.Client, e *env) error {
			in := proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Set: map[string]string{"cores": "2"}}
			in.Approval = in.ApprovalPhrase()
			_, err := c.SetGuestConfig(t.Context(), in)
			return err
		},
		"resize": func(c *proxmoxsafe.Client, e *env) error {
			in := proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Disk: "scsi0", Size: "+1G"}
			in.Approval = in.ApprovalPhrase()
			_, err := c.ResizeDisk(t.Context(), in)
			return err
		},
	}
	for name, call := range calls {
		for _, tc := range []struct {
			name    string
			age     time.Duration
			mention string
		}{
			{"too old", 50 * time.Hour, "newest backup is 2 days old (nas:backup/vzdump-qemu-120-"},
			{"none", 0, "has no backup: none on the backup storages of node pve1 (nas)"},
		} {
			t.Run(name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				e := guardEnv(t, tc.age, 24*time.Hour)
				err := call(e.client, e)
				assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrPrecondition, tc.mention, false)
				if msg := err.Error(); !strings.Contains(msg, "backup_create") || !strings.Contains(msg, "newer than 24 hours") {
					t.Errorf("refusal does not say what to do: %q", msg)
				}
			})
		}
	}
}

// TestRecentBackupGuardPasses: a backup newer than the age lets the
// destroy through; the guard off (the zero Policy) reads no backup at all.
func TestRecentBackupGuardPasses(t *testing.T) {
	t.Parallel()
	e := guardEnv(t, time.Hour, 24*time.Hour)
	in := destroyIn("qemu", 120, false, false)
	in.Wait = fastVerify()
	if _, err := e.client.DestroyGuest(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	if muts := e.fake.MutatingRequests(); len(muts) != 1 {
		t.Fatalf("mutating requests = %v, want the destroy", reqLines(muts))
	}

	off := newDestroyEnv(t, nil)
	in = destroyIn("qemu", 120, false, false)
	if _, err := off.client.DestroyGuest(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	for _, r := range off.requests() {
		if strings.Contains(r.Path, "/storage") {
			t.Errorf("guard off, yet %s %s was read", r.Method, r.Path)
		}
	}
}

// TestRecentBackupPolicyChecked: New refuses a class the guard has no
// operation of and an age out of range; Policy() reports the guard.
func TestRecentBackupPolicyChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []map[proxmoxsafe.Class]time.Duration{
		{proxmoxsafe.ClassPower: time.Hour},
		{proxmoxsafe.ClassDestroy: time.Second},
		{proxmoxsafe.ClassConfig: 11 * 365 * 24 * time.Hour},
	} {
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "auto@pve!mcp", TokenSecret: "s",
			Policy: proxmoxsafe.Policy{RecentBackup: bad}})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "Policy.RecentBackup") {
			t.Errorf("%v: err = %v, want a Policy.RecentBackup config error", bad, err)
		}
	}
	e := guardEnv(t, time.Hour, 48*time.Hour)
	if d, ok := e.client.Policy().RecentBackupAge(proxmoxsafe.ClassDestroy); !ok || d != 48*time.Hour {
		t.Errorf("Policy().RecentBackupAge(destroy) = %v, %v", d, ok)
	}
	if _, ok := (proxmoxsafe.Policy{}).RecentBackupAge(proxmoxsafe.ClassDestroy); ok {
		t.Error("the zero Policy has a guard")
	}
}
