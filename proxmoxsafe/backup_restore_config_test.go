package proxmoxsafe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestRestoreProofComparesArchiveConfig: the archive's configuration is
// read before the restore (extractconfig, a GET) and kept in the receipt
// as digests, a secret-bearing key as "present" only; the wait proves
// the restored guest reads it back, MACs and disk volumes left out; with
// keep_mac_addresses the MAC is compared too.
func TestRestoreProofComparesArchiveConfig(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "unique", true: "keep MACs"}[keep], func(t *testing.T) {
			t.Parallel()
			c := testCluster()
			c.Storages = proxmoxtest.DefaultStorages(c)
			for _, g := range c.Guests {
				if g.VMID == 100 {
					g.Config = map[string]string{"cipassword": "CANARY-archived-secret", "scsi1": "local-lvm:vm-100-disk-1,cache=writeback,size=4G", "onboot": "1"}
				}
			}
			e := newEnvWith(t, c, func(cfg *proxmoxsafe.Config) {
				cfg.Policy.Classes = append(cfg.Policy.Classes, proxmoxsafe.ClassRestore)
			})
			in := proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 150, KeepMACAddresses: keep}
			in.Approval, in.Wait = in.ApprovalPhrase(150), fastWait
			r, err := e.client.RestoreBackup(t.Context(), in)
			if err != nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted {
				t.Fatalf("RestoreBackup = %+v, %v", r, err)
			}
			arch := r.NewGuest.Archive
			if arch["cipassword"] != "present" || arch["scsi1"] == "" || arch["net0"] == "" || arch["onboot"] == "" {
				t.Errorf("archive = %v", arch)
			}
			for _, k := range []string{"vmgenid", "lock", "parent", "description"} {
				if _, ok := arch[k]; ok {
					t.Errorf("archive compares %s, which a restore changes by design", k)
				}
			}
			if strings.Contains(strings.Join(mapValues(arch), " "), "CANARY") || r.NewGuest.Unique == keep {
				t.Errorf("archive = %v, unique %v", arch, r.NewGuest.Unique)
			}
			if !strings.Contains(r.Outcome.Observed, "configuration as the archive's") {
				t.Errorf("observed = %q", r.Outcome.Observed)
			}
			got := 0
			for _, q := range e.requests() {
				if q.Path == "/nodes/pve1/vzdump/extractconfig" {
					got++
					if q.Method != "GET" || q.Query.Get("volume") != vm100Backup {
						t.Errorf("extractconfig request %s %s?%s", q.Method, q.Path, q.Query.Encode())
					}
				}
			}
			if got != 1 {
				t.Errorf("extractconfig read %d times, want once", got)
			}
		})
	}
}

// TestRestoreProofRefusesADifferentConfig: a restored guest whose
// configuration does not read back as the archive's (here: changed
// behind the restore's back) is not proven; the wait says which key.
func TestRestoreProofRefusesADifferentConfig(t *testing.T) {
	t.Parallel()
	e := restoreEnv(t, nil)
	in := proxmoxsafe.RestoreBackupInput{Node: "pve1", Archive: vm100Backup, VMID: 150}
	in.Approval = in.ApprovalPhrase(150)
	r, err := e.client.RestoreBackup(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	e.fake.FinishTasks()
	e.fake.Update(func(c *proxmoxtest.Cluster) {
		for _, g := range c.Guests {
			if g.VMID == 150 {
				g.CPUs = 64
			}
		}
	})
	out, err := e.client.Verify(t.Context(), r, &proxmoxsafe.WaitOptions{Timeout: 1500 * time.Millisecond})
	if err != nil || out.Status != proxmoxsafe.OutcomeTimeout || !strings.Contains(out.Observed, "cores differs") {
		t.Fatalf("outcome = %+v, %v; want a timeout naming cores", out, err)
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
