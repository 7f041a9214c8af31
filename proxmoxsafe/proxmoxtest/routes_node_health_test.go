package proxmoxtest

import (
	"slices"
	"testing"
)

// healthExtras are members real Proxmox returns that the schema's returns
// do not declare (shared/pve-api FACTS §12.6, §12.7): get_disks adds
// wearout, type, rpm and by_id_link; the replication list returns each
// job's config and state, while its schema declares only id.
var healthExtras = map[string][]string{
	"/nodes/{node}/disks/list": {"wearout", "type", "rpm", "by_id_link"},
	"/nodes/{node}/replication": {"guest", "jobnum", "target", "type", "source", "schedule", "disable", "comment", "rate",
		"remove_job", "vmtype", "next_sync", "last_sync", "last_try", "fail_count", "duration", "error", "pid"},
	"/nodes/{node}/disks/zfs/{name}": {},
}

// TestNodeHealthRoutesDeclared: every member the node health routes
// answer on the demo cluster is one the 9.1 schema declares, or a
// documented extra.
func TestNodeHealthRoutesDeclared(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	s := newDemo(t)
	for tmpl, paths := range map[string][]string{
		"/nodes/{node}/apt/update":       {"/nodes/pve1/apt/update"},
		"/nodes/{node}/services":         {"/nodes/pve2/services"},
		"/nodes/{node}/disks/list":       {"/nodes/pve1/disks/list", "/nodes/pve2/disks/list"},
		"/nodes/{node}/disks/zfs":        {"/nodes/pve2/disks/zfs"},
		"/nodes/{node}/disks/zfs/{name}": {"/nodes/pve2/disks/zfs/tank"},
		"/nodes/{node}/replication":      {"/nodes/pve1/replication"},
	} {
		e := schema["GET "+tmpl]
		for _, p := range paths {
			a := get(t, s, p)
			if a.code != 200 {
				t.Fatalf("GET %s: %s", p, a.status)
			}
			var objs []map[string]any
			switch d := a.body["data"].(type) {
			case map[string]any:
				objs = append(objs, d)
			case []any:
				for _, x := range d {
					objs = append(objs, x.(map[string]any))
				}
			}
			if len(objs) == 0 {
				t.Errorf("GET %s: nothing to check in %s", p, a.raw)
			}
			for _, o := range objs {
				for k := range o {
					if e.Returns != nil && !slices.Contains(e.Returns, k) && !slices.Contains(healthExtras[tmpl], k) {
						t.Errorf("GET %s returns %q, which the schema does not declare", p, k)
					}
				}
			}
		}
	}
}

func TestNodeHealthRoutes(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	// wearout: a number, or the string "N/A"; no health without SMART.
	disks := listOf(t, get(t, s, "/nodes/pve1/disks/list"))
	if len(disks) != 2 || disks[0]["wearout"] != 98.0 || disks[1]["wearout"] != "N/A" || disks[1]["health"] != "PASSED" {
		t.Errorf("disks = %v", disks)
	}
	for _, d := range listOf(t, get(t, s, "/nodes/pve1/disks/list?skipsmart=1")) {
		if _, ok := d["health"]; ok {
			t.Errorf("skipsmart: %v", d)
		}
	}
	if a := get(t, s, "/nodes/pve2/disks/zfs/nope"); a.code != 500 {
		t.Errorf("unknown pool: %s", a.status)
	}
	if a := get(t, s, "/nodes/pve1/disks/zfs/rpool"); a.body["data"].(map[string]any)["errors"] != "No known data errors" {
		t.Errorf("rpool: %s", a.raw)
	}
	// Replication: only on the source node, filtered by VM.Audit.
	if jobs := listOf(t, get(t, s, "/nodes/pve1/replication")); len(jobs) != 2 || jobs[1]["fail_count"] != 3.0 || jobs[1]["error"] == nil {
		t.Errorf("pve1 jobs = %v", jobs)
	}
	if jobs := listOf(t, get(t, s, "/nodes/pve2/replication")); len(jobs) != 0 {
		t.Errorf("the target node lists %v", jobs)
	}
	if jobs := listOf(t, get(t, s, "/nodes/pve1/replication?guest=102")); len(jobs) != 1 || jobs[0]["id"] != "102-0" {
		t.Errorf("guest=102: %v", jobs)
	}
	// Privileges: apt/update needs Sys.Modify on the node, disks/zfs
	// Sys.Audit on /, services Sys.Audit on the node.
	s.AddToken("ro@pve!t", &Token{Secret: "s", Privileges: map[string][]string{"/nodes/pve1": {"Sys.Audit"}, "/vms/100": {"VM.Audit"}}})
	ro := tokenAuth("ro@pve!t", "s")
	for path, want := range map[string]string{
		"/nodes/pve1/apt/update":  "403 Permission check failed (/nodes/pve1, Sys.Modify)",
		"/nodes/pve1/disks/zfs":   "403 Permission check failed (/, Sys.Audit)",
		"/nodes/pve1/services":    "200 OK",
		"/nodes/pve1/disks/list":  "200 OK",
		"/nodes/pve1/replication": "200 OK",
	} {
		if a := call(t, s, "GET", path, nil, ro); a.status != want {
			t.Errorf("GET %s: %s, want %s", path, a.status, want)
		}
	}
	if jobs := listOf(t, call(t, s, "GET", "/nodes/pve1/replication", nil, ro)); len(jobs) != 1 || jobs[0]["guest"] != 100.0 {
		t.Errorf("jobs seen with VM.Audit on 100 only: %v", jobs)
	}
	// An offline node: 595 after the permission check.
	s.Update(func(c *Cluster) { c.Nodes[2].Online = false })
	if a := get(t, s, "/nodes/pve3/services"); a.code != 595 {
		t.Errorf("offline: %s", a.status)
	}
	s.Update(func(c *Cluster) { c.Nodes[2].Health = &NodeHealth{NoZFSUtils: true}; c.Nodes[2].Online = true })
	if a := get(t, s, "/nodes/pve3/disks/zfs"); a.status != "500 zfsutils-linux not installed" {
		t.Errorf("no zfsutils: %s", a.status)
	}
}
