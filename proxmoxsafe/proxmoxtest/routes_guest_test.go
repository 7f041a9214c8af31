package proxmoxtest

import (
	"fmt"
	"testing"
)

// TestGuestListByNodeAndType: GET /nodes/{node}/qemu|lxc lists that node's
// guests of that type, by vmid; qmpstatus only with full=1.
func TestGuestListByNodeAndType(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	vmids := func(l []map[string]any) string {
		var out []any
		for _, e := range l {
			out = append(out, e["vmid"])
		}
		return fmt.Sprint(out)
	}
	if got := listOf(t, get(t, s, "/nodes/pve1/qemu")); vmids(got) != "[100 101 102]" || got[0]["qmpstatus"] != nil {
		t.Errorf("pve1 qemu = %v", got)
	}
	if got := listOf(t, get(t, s, "/nodes/pve2/qemu?full=1")); vmids(got) != "[103 104 105]" || got[1]["qmpstatus"] != "paused" {
		t.Errorf("pve2 qemu full = %v", got)
	}
	if got := listOf(t, get(t, s, "/nodes/pve2/lxc")); vmids(got) != "[201 204]" || got[0]["type"] != "lxc" {
		t.Errorf("pve2 lxc = %v", got)
	}
}

// TestStatusCurrentByState: status/current says what the guest is doing:
// qmpstatus for a paused VM, the running-only fields only while it runs,
// the agent flag only when the agent is enabled, and the HA state.
func TestStatusCurrentByState(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	data := func(path string) map[string]any {
		a := get(t, s, path)
		if a.code != 200 {
			t.Fatalf("GET %s: %s", path, a.status)
		}
		return a.body["data"].(map[string]any)
	}
	web := data("/nodes/pve1/qemu/100/status/current")
	if web["qmpstatus"] != "running" || web["agent"] != float64(1) || web["running-qemu"] == nil {
		t.Errorf("running VM 100: %v", web)
	}
	if ha := data("/nodes/pve1/qemu/101/status/current")["ha"].(map[string]any); ha["managed"] != float64(1) || ha["state"] != "started" {
		t.Errorf("HA-managed VM 101: ha %v", ha)
	}
	if kiosk := data("/nodes/pve2/qemu/104/status/current"); kiosk["qmpstatus"] != "paused" || kiosk["status"] != "running" {
		t.Errorf("paused VM 104: %v", kiosk)
	}
	stopped := data("/nodes/pve2/qemu/103/status/current")
	if stopped["qmpstatus"] != "stopped" || stopped["running-qemu"] != nil || stopped["agent"] != nil {
		t.Errorf("stopped VM 103 without agent: %v", stopped)
	}
	if ct := data("/nodes/pve1/lxc/200/status/current"); ct["type"] != "lxc" || ct["qmpstatus"] != nil {
		t.Errorf("container 200: %v", ct)
	}
}
