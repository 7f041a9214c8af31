package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestPowerSynchronousRefusals: what qemu-server and pve-container refuse
// before forking a worker (no task starts), with their messages; HA
// resources refuse overrule-shutdown and start an ha* task instead of
// the guest's own.
func TestPowerSynchronousRefusals(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	tests := []struct {
		name, path string
		form       url.Values
		status     string
	}{
		{"keepActive is root only", "/nodes/pve1/qemu/100/status/stop", url.Values{"keepActive": {"1"}}, "400 Parameter verification failed."},
		{"suspend a stopped VM", "/nodes/pve2/qemu/103/status/suspend", nil, "500 VM 103 not running"},
		{"resume a stopped VM", "/nodes/pve2/qemu/103/status/resume", nil, "500 VM 103 not running"},
		{"reboot a paused VM", "/nodes/pve2/qemu/104/status/reboot", nil, "500 VM is paused - cannot shutdown"},
		{"HA VM suspended to disk", "/nodes/pve1/qemu/101/status/suspend", url.Values{"todisk": {"1"}}, "500 Cannot suspend HA managed VM to disk"},
		{"HA VM overrule-shutdown", "/nodes/pve1/qemu/101/status/stop", url.Values{"overrule-shutdown": {"1"}}, "400 Parameter verification failed."},
		{"stop a stopped container", "/nodes/pve3/lxc/203/status/stop", nil, "500 CT 203 not running"},
		{"reboot a stopped container", "/nodes/pve3/lxc/203/status/reboot", nil, "500 VM 203 not running"},
	}
	for _, tt := range tests {
		if a := post(t, s, tt.path, tt.form); a.status != tt.status {
			t.Errorf("%s: %s %s, want %s", tt.name, a.status, a.raw, tt.status)
		}
	}
	if n := len(s.Tasks()); n != 0 {
		t.Fatalf("%d tasks started by refused power requests", n)
	}
	upid := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/shutdown", nil))
	if tasks := s.Tasks(); len(tasks) != 1 || tasks[0].UPID != upid || tasks[0].Type != "hastop" {
		t.Errorf("HA shutdown started %+v, want one hastop task", tasks)
	}
}
