package proxmoxtest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestNodeStorage(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	got := listOf(t, get(t, s, "/nodes/pve1/storage"))
	if len(got) != 4 { // local, local-lvm and the demo's backup storages pbs and nas
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
