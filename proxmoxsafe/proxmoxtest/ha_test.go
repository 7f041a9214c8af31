package proxmoxtest

import (
	"strings"
	"testing"
)

func TestHADelay(t *testing.T) {
	t.Parallel()
	for _, delay := range []int{0, 1, 3, -1} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			s := NewUnstartedServer(DemoCluster())
			s.HADelayPolls = delay
			s.TaskPolls = 5 // ha tasks ignore it
			s.StartTLS()
			defer s.Close()
			upid := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/shutdown", nil))
			if !strings.Contains(upid, ":hastop:101:") {
				t.Fatalf("UPID %q is not an hastop task", upid)
			}
			st := taskStatus(t, s, "pve1", upid)
			if st["status"] != "stopped" || st["exitstatus"] != "OK" {
				t.Fatalf("ha task = %v, want stopped OK on first poll", st)
			}
			want := map[int]int{0: 2, -1: 0}[delay]
			if delay > 0 {
				want = delay
			}
			for i := range want + 1 {
				a := get(t, s, "/nodes/pve1/qemu/101/status/current")
				d := a.body["data"].(map[string]any)
				wantStatus := "running"
				if i == want {
					wantStatus = "stopped"
				}
				if d["status"] != wantStatus {
					t.Fatalf("read %d: status %v, want %s", i+1, d["status"], wantStatus)
				}
				ha := d["ha"].(map[string]any)
				if ha["managed"] != 1.0 || ha["state"] != "stopped" {
					t.Errorf("ha = %v", ha)
				}
			}
			up := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/start", nil))
			if !strings.Contains(up, ":hastart:") {
				t.Errorf("start of HA guest gave %q", up)
			}
		})
	}
}
