package proxmoxtest

import (
	"strings"
	"testing"
	"time"
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
				// ha.state is the CRM's: request_stop until the LRM
				// has stopped the guest.
				wantHA := map[string]string{"running": "request_stop", "stopped": "stopped"}[wantStatus]
				ha := d["ha"].(map[string]any)
				if ha["managed"] != 1.0 || ha["state"] != wantHA {
					t.Errorf("read %d: ha = %v, want state %s", i+1, ha, wantHA)
				}
			}
			up := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/start", nil))
			if !strings.Contains(up, ":hastart:") {
				t.Errorf("start of HA guest gave %q", up)
			}
		})
	}
}

// TestHADelayTimed: with HADelay the guest stops that long after the
// request however often it is read, and only then.
func TestHADelayTimed(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(DemoCluster())
	s.HADelay = 300 * time.Millisecond
	s.StartTLS()
	defer s.Close()
	start := time.Now()
	post(t, s, "/nodes/pve1/qemu/101/status/shutdown", nil)
	for range 5 { // reads do not hurry the LRM
		d := get(t, s, "/nodes/pve1/qemu/101/status/current").body["data"].(map[string]any)
		if d["status"] != "running" && time.Since(start) < s.HADelay {
			t.Fatalf("stopped after %v, before HADelay", time.Since(start))
		}
	}
	time.Sleep(s.HADelay)
	if d := get(t, s, "/nodes/pve1/qemu/101/status/current").body["data"].(map[string]any); d["status"] != "stopped" {
		t.Errorf("after HADelay: %v", d["status"])
	}
}

// TestHACRMState: status/current and /cluster/resources show the HA
// manager's state; in a state the manager owns the guest in (error here)
// a power request still gives an hastart task that ends OK, and nothing
// happens to the guest.
func TestHACRMState(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	var g *Guest
	for _, x := range c.Guests {
		if x.VMID == 101 {
			g = x
		}
	}
	g.Status, g.Uptime, g.HAState, g.HACRMState = "stopped", 0, "started", "error"
	s := NewUnstartedServer(c)
	s.HADelayPolls = -1
	s.StartTLS()
	defer s.Close()
	upid := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/start", nil))
	if !strings.Contains(upid, ":hastart:101:") {
		t.Fatalf("UPID %q is not an hastart task", upid)
	}
	if st := taskStatus(t, s, "pve1", upid); st["exitstatus"] != "OK" {
		t.Errorf("hastart task = %v, want OK", st)
	}
	d := get(t, s, "/nodes/pve1/qemu/101/status/current").body["data"].(map[string]any)
	if d["status"] != "stopped" || d["ha"].(map[string]any)["state"] != "error" {
		t.Errorf("status/current = %v, want stopped and ha.state error", d)
	}
	found := false
	for _, e := range get(t, s, "/cluster/resources").body["data"].([]any) {
		if m := e.(map[string]any); m["vmid"] == 101.0 {
			found = true
			if m["hastate"] != "error" {
				t.Errorf("/cluster/resources hastate = %v, want error", m["hastate"])
			}
		}
	}
	if !found {
		t.Error("guest 101 not in /cluster/resources")
	}
}
