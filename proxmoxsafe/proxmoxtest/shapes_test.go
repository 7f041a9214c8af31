package proxmoxtest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// loadRecording returns the skeleton of a recorded response's "data" (its
// keys, nesting and JSON types; see internal/pvefacts). Missing data fails
// the test: a check that silently skips checks nothing.
func loadRecording(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pve-recorded.json"))
	if err != nil {
		t.Fatalf("recording facts missing (%v): run go generate ./proxmoxsafe/proxmoxtest", err)
	}
	var doc struct{ Recordings map[string]any }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	rec, ok := doc.Recordings[name]
	if !ok {
		t.Fatalf("recording %s is not in testdata/pve-recorded.json: run go generate ./proxmoxsafe/proxmoxtest", name)
	}
	return rec
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// compareShape checks that every key of the recording is present in ours
// with the same JSON type (recursively for objects), except keys listed in
// skip; keys we add beyond the recording must be declared by the 9.1 schema
// (checked in schema_test.go).
func compareShape(t *testing.T, where string, rec, got map[string]any, skip map[string]bool) {
	t.Helper()
	for k, rv := range rec {
		if skip[k] {
			continue
		}
		gv, ok := got[k]
		if !ok {
			t.Errorf("%s: key %q missing (recorded %v)", where, k, rv)
			continue
		}
		if jsonType(rv) != jsonType(gv) {
			t.Errorf("%s.%s: type %s, recorded %s", where, k, jsonType(gv), jsonType(rv))
			continue
		}
		if rm, ok := rv.(map[string]any); ok {
			compareShape(t, where+"."+k, rm, gv.(map[string]any), skip)
		}
		if ra, ok := rv.([]any); ok && len(ra) > 0 && len(gv.([]any)) > 0 && jsonType(ra[0]) != jsonType(gv.([]any)[0]) {
			t.Errorf("%s.%s: element type %s, recorded %s", where, k, jsonType(gv.([]any)[0]), jsonType(ra[0]))
		}
	}
}

func TestShapesMatchRecordings(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	up := upidOf(t, post(t, s, "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"shape"}}))
	// Keys that depend on hardware/config we do not model (spice needs a
	// qxl display; blockstat of the ide2 cdrom; per-drive QMP counters).
	skip := map[string]bool{"spice": true, "ide2": true, "rd_total_time_ns": true, "flush_total_time_ns": true,
		"wr_total_time_ns": true, "unmap_operations": true, "failed_unmap_operations": true, "invalid_unmap_operations": true,
		"unmap_total_time_ns": true, "unmap_merged": true, "unmap_bytes": true, "invalid_flush_operations": true,
		"idle_time_ns": true, "flush_operations": true, "invalid_rd_operations": true, "wr_highest_offset": true,
		"rd_merged": true, "wr_merged": true, "tap1001i0": true, "failed_flush_operations": true, "invalid_wr_operations": true}
	tests := []struct {
		name, recording, path string
		pick                  func(got []any) map[string]any // for lists: which entry to compare with rec[0]
		recPick               func(rec []any) map[string]any
	}{
		{name: "node status", recording: "pve7/cluster4-node-status.json", path: "/nodes/pve1/status"},
		{name: "qemu running", recording: "pve7/cluster4-qemu-status-current-running.json", path: "/nodes/pve1/qemu/100/status/current"},
		{name: "qemu stopped", recording: "pve7/qemu-status-current-stopped.json", path: "/nodes/pve2/qemu/103/status/current"},
		{name: "lxc template", recording: "pve7/cluster4-lxc-status-current-template.json", path: "/nodes/pve3/lxc/203/status/current"},
		{name: "version", recording: "pve7/cluster4-node-version.json", path: "/version"},
		{name: "task status running", recording: "pve7/tasks-status-running.json", path: "/nodes/pve1/tasks/" + url.PathEscape(up) + "/status"},
		{name: "cluster status cluster entry", recording: "pve7/cluster4-cluster-status.json", path: "/cluster/status",
			pick: func(g []any) map[string]any { return g[0].(map[string]any) }, recPick: func(r []any) map[string]any { return r[0].(map[string]any) }},
		{name: "cluster status node entry", recording: "pve7/cluster4-cluster-status.json", path: "/cluster/status",
			pick: func(g []any) map[string]any { return g[1].(map[string]any) }, recPick: func(r []any) map[string]any { return r[1].(map[string]any) }},
		{name: "resources running qemu", recording: "pve7/cluster4-cluster-resources.json", path: "/cluster/resources",
			pick: byID("qemu/100"), recPick: byID("qemu/100")},
		{name: "resources tagged qemu", recording: "pve7/cluster4-cluster-resources.json", path: "/cluster/resources",
			pick: byID("qemu/103"), recPick: byID("qemu/102")},
		{name: "resources node", recording: "pve7/cluster4-cluster-resources.json", path: "/cluster/resources",
			pick: byID("node/pve1"), recPick: byID("node/node1")},
		{name: "nodes", recording: "pve7/cluster4-nodes.json", path: "/nodes",
			pick: func(g []any) map[string]any { return g[0].(map[string]any) }, recPick: func(r []any) map[string]any { return r[0].(map[string]any) }},
		{name: "lxc list template (PVE 9: vmid int)", recording: "pve7/cluster4-lxc-list.json", path: "/nodes/pve3/lxc",
			pick: byVMID(203), recPick: func(r []any) map[string]any {
				m := r[2].(map[string]any)
				m["vmid"] = 101.0 // pve-container >= 5.0.10 returns an integer
				return m
			}},
		{name: "snapshot entry", recording: "pve7/qemu-snapshot-list.json", path: "/nodes/pve3/qemu/107/snapshot",
			pick: func(g []any) map[string]any { return g[0].(map[string]any) }, recPick: func(r []any) map[string]any { return r[0].(map[string]any) }},
		{name: "snapshot current", recording: "pve7/qemu-snapshot-list.json", path: "/nodes/pve3/qemu/107/snapshot",
			pick: func(g []any) map[string]any { return g[len(g)-1].(map[string]any) }, recPick: func(r []any) map[string]any { return r[len(r)-1].(map[string]any) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := loadRecording(t, tt.recording)
			got := get(t, s, tt.path).body["data"]
			if tt.pick == nil {
				compareShape(t, tt.name, rec.(map[string]any), got.(map[string]any), skip)
				return
			}
			compareShape(t, tt.name, tt.recPick(rec.([]any)), tt.pick(got.([]any)), skip)
		})
	}
	t.Run("task status stopped", func(t *testing.T) {
		rec := loadRecording(t, "pve7/tasks-status-qmsnapshot-ok.json").(map[string]any)
		st, _ := pollUntilStopped(t, s, "pve1", up)
		compareShape(t, "task", rec, st, nil)
	})
}

func byID(id string) func([]any) map[string]any {
	return func(l []any) map[string]any {
		for _, e := range l {
			if m := e.(map[string]any); m["id"] == id {
				return m
			}
		}
		return map[string]any{}
	}
}

func byVMID(vmid float64) func([]any) map[string]any {
	return func(l []any) map[string]any {
		for _, e := range l {
			if m := e.(map[string]any); m["vmid"] == vmid {
				return m
			}
		}
		return map[string]any{}
	}
}

// TestTypeQuirks pins the quirks clients must tolerate.
func TestTypeQuirks(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	c.Version = "7.4-16"
	s := NewServer(c)
	defer s.Close()
	lxc := get(t, s, "/nodes/pve1/lxc").body["data"].([]any)[0].(map[string]any)
	if lxc["vmid"] != "200" {
		t.Errorf("PVE 7 lxc list vmid = %#v, want the string \"200\"", lxc["vmid"])
	}
	ns := get(t, s, "/nodes/pve1/status").body["data"].(map[string]any)
	if _, ok := ns["loadavg"].([]any)[0].(string); !ok {
		t.Errorf("loadavg = %#v, want strings", ns["loadavg"])
	}
	if v := get(t, s, "/version").body["data"].(map[string]any); v["release"] != "7.4" || v["version"] != "7.4-16" {
		t.Errorf("version = %v", v)
	}
}
