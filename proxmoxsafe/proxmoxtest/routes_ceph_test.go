package proxmoxtest

import "testing"

func TestCephAbsentAndPresent(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	for _, p := range []string{"/cluster/ceph/status", "/nodes/pve1/ceph/status"} {
		if a := get(t, s, p); a.status != "500 binary not installed: /usr/bin/ceph-mon" {
			t.Errorf("GET %s without Ceph: %s", p, a.status)
		}
	}
	s.Update(func(c *Cluster) { c.Ceph = &CephModel{NotInitialized: true} })
	if a := get(t, s, "/cluster/ceph/status"); a.status != "500 pveceph configuration not initialized" {
		t.Errorf("not initialized: %s", a.status)
	}
	s.Update(func(c *Cluster) { c.Ceph = DemoCeph("pve1", "pve2", "pve3"); c.Ceph.OutOfQuorum = []string{"pve3"} })
	a := get(t, s, "/cluster/ceph/status")
	if a.code != 200 {
		t.Fatalf("status %s", a.status)
	}
	d := a.body["data"].(map[string]any)
	if d["health"].(map[string]any)["status"] != "HEALTH_WARN" {
		t.Errorf("health = %v", d["health"])
	}
	if names := d["quorum_names"].([]any); len(names) != 2 || names[0] != "pve1" {
		t.Errorf("quorum_names = %v", names)
	}
	if pg := d["pgmap"].(map[string]any); pg["num_pgs"] != 128.0 {
		t.Errorf("pgmap = %v", pg)
	}
	// Sys.Audit or Datastore.Audit on / (check_any).
	s.AddToken("a@pve!vm", &Token{Secret: "s", Privileges: map[string][]string{"/vms": {"VM.Audit"}}})
	s.AddToken("a@pve!ds", &Token{Secret: "s", Privileges: map[string][]string{"/": {"Datastore.Audit"}}})
	if a := call(t, s, "GET", "/cluster/ceph/status", nil, tokenAuth("a@pve!vm", "s")); a.status != "403 Permission check failed (/, Sys.Audit|Datastore.Audit)" {
		t.Errorf("no privilege: %s", a.status)
	}
	if a := call(t, s, "GET", "/cluster/ceph/status", nil, tokenAuth("a@pve!ds", "s")); a.code != 200 {
		t.Errorf("Datastore.Audit: %s", a.status)
	}
}

// TestCephShapeMatchesRecording: every key of the recorded Reef status is
// present with the same JSON type. Deep mgr module listings are skipped
// (the recording itself truncates them).
func TestCephShapeMatchesRecording(t *testing.T) {
	t.Parallel()
	rec := loadRecording(t, "pve8/cluster-ceph-status.json").(map[string]any)
	s := newDemo(t)
	s.Update(func(c *Cluster) { c.Ceph = DemoCeph("pve1", "pve2", "pve3") })
	got := get(t, s, "/cluster/ceph/status").body["data"].(map[string]any)
	skip := map[string]bool{"standbys": true, "available_modules": true, "active_clients": true, "always_on_modules": true,
		"services": true, "by_rank": true, "checks": true}
	compareShape(t, "ceph", rec, got, skip)
	// checks: same shape per check.
	recCheck := rec["health"].(map[string]any)["checks"].(map[string]any)["OSD_NEARFULL"].(map[string]any)
	gotCheck := got["health"].(map[string]any)["checks"].(map[string]any)["OSD_NEARFULL"].(map[string]any)
	compareShape(t, "ceph.health.checks.OSD_NEARFULL", recCheck, gotCheck, nil)
	recMon := rec["monmap"].(map[string]any)["mons"].([]any)[0].(map[string]any)
	gotMon := got["monmap"].(map[string]any)["mons"].([]any)[0].(map[string]any)
	compareShape(t, "ceph.monmap.mons[0]", recMon, gotMon, nil)
}
