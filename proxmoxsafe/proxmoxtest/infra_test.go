package proxmoxtest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func tokenAuth(id, secret string) string { return "PVEAPIToken=" + id + "=" + secret }

func listOf(t *testing.T, a answer) []map[string]any {
	t.Helper()
	if a.code != http.StatusOK {
		t.Fatalf("status %s: %s", a.status, a.raw)
	}
	var out []map[string]any
	for _, e := range a.body["data"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func TestNodeStorage(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	got := listOf(t, get(t, s, "/nodes/pve1/storage"))
	if len(got) != 2 {
		t.Fatalf("storages = %v", got)
	}
	local := got[0]
	if local["storage"] != "local" || local["type"] != "dir" || local["content"] != "backup,iso,vztmpl" ||
		local["active"] != 1.0 || local["enabled"] != 1.0 || local["shared"] != 0.0 {
		t.Errorf("local = %v", local)
	}
	if local["total"].(float64) <= 0 || local["avail"].(float64) != local["total"].(float64)-local["used"].(float64) {
		t.Errorf("local sizes = %v", local)
	}
	if got := listOf(t, get(t, s, "/nodes/pve1/storage?content=images")); len(got) != 1 || got[0]["storage"] != "local-lvm" {
		t.Errorf("content=images: %v", got)
	}
	if a := get(t, s, "/nodes/pve1/storage?storage=nope"); a.code != 400 || !strings.Contains(string(a.raw), "No such storage.") {
		t.Errorf("unknown storage filter: %s %s", a.status, a.raw)
	}
	s.SetNodeOnline("pve3", false)
	if a := get(t, s, "/nodes/pve3/storage"); a.code != 595 {
		t.Errorf("offline node: %s", a.status)
	}
	// ACL filter: only storages with Datastore.Audit or AllocateSpace.
	s.AddToken("ops@pve!st", &Token{Secret: "s", Privileges: map[string][]string{"/storage/local-lvm": {"Datastore.Audit"}}})
	a := call(t, s, http.MethodGet, "/nodes/pve1/storage", nil, tokenAuth("ops@pve!st", "s"))
	if got := listOf(t, a); len(got) != 1 || got[0]["storage"] != "local-lvm" {
		t.Errorf("filtered list = %v", got)
	}
}

func TestNodeStorageStates(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	c.Storages = []*Storage{
		{ID: "nfs", Type: "nfs", Content: []string{"backup"}, Shared: true, Inactive: true, Total: 100},
		{ID: "old", Type: "dir", Content: []string{"iso"}, Disabled: true},
		{ID: "only2", Type: "zfspool", Content: []string{"images"}, Nodes: []string{"pve2"}, Total: 10, Used: 4},
	}
	s := NewServer(c)
	defer s.Close()
	got := listOf(t, get(t, s, "/nodes/pve1/storage"))
	if len(got) != 2 {
		t.Fatalf("pve1 storages = %v", got)
	}
	for _, e := range got {
		if e["active"] != 0.0 {
			t.Errorf("%v should be inactive", e)
		}
		if _, ok := e["total"]; ok {
			t.Errorf("inactive storage has sizes: %v", e)
		}
	}
	if got[1]["enabled"] != 0.0 {
		t.Errorf("disabled = %v", got[1])
	}
	if got := listOf(t, get(t, s, "/nodes/pve1/storage?enabled=1")); len(got) != 1 {
		t.Errorf("enabled=1: %v", got)
	}
	if got := listOf(t, get(t, s, "/nodes/pve2/storage")); len(got) != 3 || got[2]["used_fraction"] != 0.4 {
		t.Errorf("pve2 = %v", got)
	}
	for path, msg := range map[string]string{
		"/nodes/pve1/storage/nope/content":  "500 storage 'nope' does not exist",
		"/nodes/pve1/storage/only2/content": "500 storage 'only2' is not available on node 'pve1'",
		"/nodes/pve1/storage/old/content":   "500 storage 'old' is disabled",
		"/nodes/pve1/storage/nfs/content":   "500 storage 'nfs' is not online",
	} {
		if a := get(t, s, path); a.status != msg {
			t.Errorf("GET %s: %q, want %q", path, a.status, msg)
		}
	}
	// Resources: disabled storages are absent, inactive ones "unknown".
	res := listOf(t, get(t, s, "/cluster/resources?type=storage"))
	var ids []string
	for _, e := range res {
		ids = append(ids, e["id"].(string))
		if e["storage"] == "nfs" && (e["status"] != "unknown" || e["disk"] != nil) {
			t.Errorf("inactive resource = %v", e)
		}
	}
	if !slices.Equal(ids, []string{"storage/pve1/nfs", "storage/pve2/nfs", "storage/pve2/only2", "storage/pve3/nfs"}) {
		t.Errorf("resource ids = %v", ids)
	}
}

func TestStorageContentBackups(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	c.Storages = []*Storage{{ID: "local", Type: "dir", Content: []string{"backup", "iso"}, Backups: []*Backup{
		{VMID: 100, Type: "qemu", Node: "pve1", CTime: 1767225600, Size: 1 << 30, Notes: "first line\nsecond line", Protected: true},
		{VMID: 200, Type: "lxc", Node: "pve1", CTime: 1767229200, Size: 2 << 30},
		{VMID: 101, Type: "qemu", Node: "pve2", CTime: 1767232800, Size: 3 << 30},
	}}}
	s := NewServer(c)
	defer s.Close()
	got := listOf(t, get(t, s, "/nodes/pve1/storage/local/content?content=backup"))
	if len(got) != 2 {
		t.Fatalf("pve1 backups = %v (a non-shared storage lists only its node's files)", got)
	}
	b := got[0]
	want := map[string]any{"volid": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", "content": "backup",
		"format": "vma.zst", "size": float64(1 << 30), "ctime": 1767225600.0, "vmid": 100.0, "subtype": "qemu",
		"notes": "first line", "protected": 1.0}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %v, want %v", k, b[k], v)
		}
	}
	if got[1]["format"] != "tar.zst" || got[1]["protected"] != nil || got[1]["notes"] != nil {
		t.Errorf("lxc backup = %v", got[1])
	}
	if got := listOf(t, get(t, s, "/nodes/pve1/storage/local/content?vmid=200")); len(got) != 1 || got[0]["vmid"] != 200.0 {
		t.Errorf("vmid filter = %v", got)
	}
	if got := listOf(t, get(t, s, "/nodes/pve1/storage/local/content?content=iso")); len(got) != 0 {
		t.Errorf("content=iso = %v", got)
	}
	if a := get(t, s, "/nodes/pve1/storage/local/content?content=bogus"); a.code != 400 {
		t.Errorf("bad content: %s", a.status)
	}
	if a := get(t, s, "/nodes/pve1/storage/local/content?vmid=5"); a.code != 400 {
		t.Errorf("bad vmid: %s", a.status)
	}

	// check_volume_access: Audit alone passes the call but shows nothing;
	// AllocateSpace + VM.Backup shows that guest's backups.
	s.AddToken("a@pve!audit", &Token{Secret: "s", Privileges: map[string][]string{"/storage": {"Datastore.Audit"}}})
	s.AddToken("a@pve!backup", &Token{Secret: "s", Privileges: map[string][]string{
		"/storage/local": {"Datastore.AllocateSpace"}, "/vms/200": {"VM.Backup"}}})
	s.AddToken("a@pve!none", &Token{Secret: "s", Privileges: map[string][]string{"/vms": {"VM.Audit"}}})
	if got := listOf(t, call(t, s, "GET", "/nodes/pve1/storage/local/content", nil, tokenAuth("a@pve!audit", "s"))); len(got) != 0 {
		t.Errorf("Datastore.Audit only sees %v", got)
	}
	if got := listOf(t, call(t, s, "GET", "/nodes/pve1/storage/local/content", nil, tokenAuth("a@pve!backup", "s"))); len(got) != 1 || got[0]["vmid"] != 200.0 {
		t.Errorf("AllocateSpace+VM.Backup sees %v", got)
	}
	a := call(t, s, "GET", "/nodes/pve1/storage/local/content", nil, tokenAuth("a@pve!none", "s"))
	if a.status != "403 Permission check failed (/storage/local, Datastore.Audit|Datastore.AllocateSpace)" {
		t.Errorf("no privilege: %s", a.status)
	}
}

func TestStorageConfigHidesSecrets(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	c.Storages = []*Storage{{ID: "pbs", Type: "pbs", Content: []string{"backup"}, Shared: true, Config: map[string]string{
		"server": "pbs.example.com", "datastore": "main", "username": "backup@pbs", "fingerprint": "AA:BB",
		"password": "hunter2", "encryption-key": "KEY", "keyring": "RING", "master-pubkey": "PUB"}}}
	s := NewServer(c)
	defer s.Close()
	a := get(t, s, "/storage")
	for _, secret := range []string{"hunter2", "KEY", "RING", "PUB", "password"} {
		if strings.Contains(string(a.raw), secret) {
			t.Errorf("GET /storage returns %q: %s", secret, a.raw)
		}
	}
	got := listOf(t, a)
	if len(got) != 1 || got[0]["server"] != "pbs.example.com" || got[0]["shared"] != 1.0 {
		t.Errorf("config = %v", got)
	}
}

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

func TestHAStatusAndResources(t *testing.T) {
	t.Parallel()
	s := newDemo(t) // guest 101 is HA-managed on pve1
	st := listOf(t, get(t, s, "/cluster/ha/status/current"))
	var ids []string
	for _, e := range st {
		ids = append(ids, e["id"].(string))
	}
	if !slices.Equal(ids, []string{"quorum", "master", "lrm:pve1", "lrm:pve2", "lrm:pve3", "service:vm:101"}) {
		t.Fatalf("ids = %v", ids)
	}
	if st[0]["quorate"] != 1.0 || st[0]["status"] != "OK" {
		t.Errorf("quorum = %v", st[0])
	}
	svc := st[5]
	if svc["sid"] != "vm:101" || svc["node"] != "pve1" || svc["state"] != "started" || svc["request_state"] != "started" ||
		svc["status"] != "vm:101 (pve1, started)" || svc["failback"] != 1.0 {
		t.Errorf("service = %v", svc)
	}
	if !strings.HasPrefix(st[2]["status"].(string), "pve1 (active, ") || !strings.HasPrefix(st[3]["status"].(string), "pve2 (idle, ") {
		t.Errorf("lrm = %v / %v", st[2], st[3])
	}
	res := listOf(t, get(t, s, "/cluster/ha/resources"))
	if len(res) != 1 || res[0]["sid"] != "vm:101" || res[0]["type"] != "vm" || res[0]["state"] != "started" || res[0]["max_restart"] != 1.0 {
		t.Errorf("resources = %v", res)
	}
	if got := listOf(t, get(t, s, "/cluster/ha/resources?type=ct")); len(got) != 0 {
		t.Errorf("type=ct = %v", got)
	}
	s.SetNodeOnline("pve1", false)
	st = listOf(t, get(t, s, "/cluster/ha/status/current"))
	if st[len(st)-1]["crm_state"] != "fence" {
		t.Errorf("service on a dead node = %v", st[len(st)-1])
	}
	s.AddToken("a@pve!vm", &Token{Secret: "s", Privileges: map[string][]string{"/vms": {"VM.Audit"}}})
	if a := call(t, s, "GET", "/cluster/ha/status/current", nil, tokenAuth("a@pve!vm", "s")); a.status != "403 Permission check failed (/, Sys.Audit)" {
		t.Errorf("no privilege: %s", a.status)
	}
}

func TestHAUnused(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	for _, g := range c.Guests {
		g.HAManaged = false
	}
	s := NewServer(c)
	defer s.Close()
	st := listOf(t, get(t, s, "/cluster/ha/status/current"))
	if len(st) != 1 || st[0]["id"] != "quorum" {
		t.Errorf("HA never used: %v", st)
	}
}

// TestInfraReturnsDeclared: what our storage, Ceph and HA endpoints return
// is declared by the 9.1 schema, apart from the documented real extras.
func TestInfraReturnsDeclared(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	s := newDemo(t)
	extras := map[string][]string{
		// pve-storage list_volumes also returns these (rec6 storage-content-backup.json has content).
		"/nodes/{node}/storage/{storage}/content": {"content", "subtype"},
		// The 9.1 index declares only sid; real entries are the resources.cfg sections (Resources.pm api_copy_config).
		"/cluster/ha/resources": {"type", "state", "max_restart", "max_relocate", "failback", "digest"},
	}
	for tmpl, p := range map[string]string{
		"/nodes/{node}/storage":                   "/nodes/pve1/storage",
		"/nodes/{node}/storage/{storage}/content": "/nodes/pve1/storage/local/content",
		"/cluster/ha/status/current":              "/cluster/ha/status/current",
		"/cluster/ha/resources":                   "/cluster/ha/resources",
	} {
		declared := schema["GET "+tmpl].Returns
		if declared == nil {
			t.Errorf("GET %s: the schema facts declare no properties", tmpl)
		}
		for _, e := range listOf(t, get(t, s, p)) {
			for k := range e {
				if !slices.Contains(declared, k) && !slices.Contains(extras[tmpl], k) {
					t.Errorf("GET %s returns %q, not declared by the schema", p, k)
				}
			}
		}
	}
}
