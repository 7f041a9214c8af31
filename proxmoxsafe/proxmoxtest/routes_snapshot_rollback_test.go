package proxmoxtest

import (
	"net/url"
	"testing"
)

func TestSnapshotTreeAfterRollback(t *testing.T) {
	t.Parallel()
	s := NewServer(configCluster())
	t.Cleanup(s.Close)
	list := get(t, s, "/nodes/pve1/qemu/100/snapshot").body["data"].([]any)
	cur := list[len(list)-1].(map[string]any)
	if cur["name"] != "current" || cur["parent"] != "a" || cur["running"] != 1.0 || cur["description"] != "You are here!" {
		t.Errorf("current entry = %v", cur)
	}
	// A new snapshot branches off the current one and becomes current.
	up := upidOf(t, post(t, s, "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"cc"}}))
	pollUntilStopped(t, s, "pve1", up)
	parents := map[string]any{}
	for _, e := range get(t, s, "/nodes/pve1/qemu/100/snapshot").body["data"].([]any) {
		m := e.(map[string]any)
		parents[m["name"].(string)] = m["parent"]
	}
	if parents["cc"] != "a" || parents["current"] != "cc" || parents["b"] != "a" || parents["a"] != nil {
		t.Errorf("parents = %v, want cc on a, current on cc", parents)
	}
	if cfg := get(t, s, "/nodes/pve1/qemu/100/config").body["data"].(map[string]any); cfg["parent"] != "cc" {
		t.Errorf("config parent = %v", cfg["parent"])
	}
}
