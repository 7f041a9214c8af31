package proxmoxtest

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// migrateCluster: four nodes (pve3 offline), a storage pve4 lacks, and
// one guest per migration situation.
func migrateCluster(version string) *Cluster {
	return &Cluster{
		Name: "lab", Version: version,
		Nodes: []*Node{{Name: "pve1", Online: true, IP: "10.0.0.1"}, {Name: "pve2", Online: true, IP: "10.0.0.2"}, {Name: "pve3", Online: false, IP: "10.0.0.3"},
			{Name: "pve4", Online: true, IP: "10.0.0.4"}},
		Storages: []*Storage{
			{ID: "local", Type: "dir", Content: []string{"iso", "backup"}},
			{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}},
			{ID: "fast", Type: "zfspool", Content: []string{"images"}, Nodes: []string{"pve1", "pve2", "pve3"}},
		},
		Guests: []*Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web", Status: "running", Uptime: 500},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "disky", Status: "running", Uptime: 500,
				LocalDisks: []LocalDisk{{VolID: "local-lvm:vm-101-disk-0", Size: 32 << 30}}},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "gpu", Status: "stopped", LocalResources: []string{"hostpci0"}},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "zfs", Status: "stopped", LocalDisks: []LocalDisk{{VolID: "fast:vm-103-disk-0", Size: 8 << 30}}},
			{VMID: 104, Node: "pve1", Type: "qemu", Name: "busy", Status: "running", Lock: "backup"},
			{VMID: 105, Node: "pve1", Type: "qemu", Name: "ha", Status: "running", HAManaged: true, HAState: "started"},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Uptime: 500},
			{VMID: 201, Node: "pve1", Type: "lxc", Name: "ct-off", Status: "stopped"},
		},
	}
}

func newMigrateFake(t *testing.T, version string) *Server {
	t.Helper()
	s := NewServer(migrateCluster(version))
	t.Cleanup(s.Close)
	return s
}

// The precheck answers what the schema declares: local disks, local
// devices, the nodes whose storage fits (an offline node included, as in
// Proxmox); the container precheck exists from PVE 9 only.
func TestMigratePrecheck(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	s := newMigrateFake(t, "")
	a := get(t, s, "/nodes/pve1/qemu/103/migrate?target=pve4")
	d, _ := a.body["data"].(map[string]any)
	if a.code != 200 || d == nil {
		t.Fatalf("precheck: %s %s", a.status, a.raw)
	}
	for k := range d {
		if !slices.Contains(schema["GET /nodes/{node}/qemu/{vmid}/migrate"].Returns, k) {
			t.Errorf("precheck returns %q, which the schema does not declare", k)
		}
	}
	if got := toStrings(d["allowed_nodes"]); !slices.Equal(got, []string{"pve2", "pve3"}) {
		t.Errorf("allowed_nodes = %v, want [pve2 pve3]", got)
	}
	na, _ := d["not_allowed_nodes"].(map[string]any)
	if p4, _ := na["pve4"].(map[string]any); len(na) != 1 || !slices.Equal(toStrings(p4["unavailable_storages"]), []string{"fast"}) {
		t.Errorf("not_allowed_nodes = %v", na)
	}
	if disks, _ := d["local_disks"].([]any); len(disks) != 1 || disks[0].(map[string]any)["volid"] != "fast:vm-103-disk-0" {
		t.Errorf("local_disks = %v", d["local_disks"])
	}
	a = get(t, s, "/nodes/pve1/qemu/102/migrate")
	if got := toStrings(a.body["data"].(map[string]any)["local_resources"]); !slices.Equal(got, []string{"hostpci0"}) {
		t.Errorf("local_resources = %v", got)
	}
	if a := get(t, s, "/nodes/pve1/qemu/104/migrate"); a.status != "500 VM is locked (backup)" {
		t.Errorf("locked VM precheck: %q", a.status)
	}
	a = get(t, s, "/nodes/pve1/lxc/200/migrate?target=pve2")
	d, _ = a.body["data"].(map[string]any)
	for k := range d {
		if !slices.Contains(schema["GET /nodes/{node}/lxc/{vmid}/migrate"].Returns, k) {
			t.Errorf("container precheck returns %q, which the schema does not declare", k)
		}
	}
	if d["running"] != float64(1) || !slices.Equal(toStrings(d["allowed-nodes"]), []string{"pve2", "pve3", "pve4"}) {
		t.Errorf("container precheck = %s", a.raw)
	}
	old := newMigrateFake(t, "8.4.1")
	if a := get(t, old, "/nodes/pve1/lxc/200/migrate"); a.status != "501 Method 'GET /nodes/pve1/lxc/200/migrate' not implemented" {
		t.Errorf("container precheck on 8.4: %q", a.status)
	}
	// PVE 7 lists the nodes only for a stopped VM.
	v7 := newMigrateFake(t, "7.4-16")
	if d := get(t, v7, "/nodes/pve1/qemu/100/migrate").body["data"].(map[string]any); d["allowed_nodes"] != nil || d["mapped-resources"] != nil {
		t.Errorf("7.4 precheck of a running VM = %v", d)
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := []string{}
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// The synchronous refusals of POST …/migrate, with Proxmox's codes and
// texts; none starts a task.
func TestMigrateRefusedSynchronously(t *testing.T) {
	t.Parallel()
	s := newMigrateFake(t, "")
	tests := []struct {
		path   string
		form   url.Values
		status string
		errs   string
	}{
		{"/nodes/pve1/qemu/100/migrate", url.Values{"target": {"pve1"}, "online": {"1"}}, "400 Parameter verification failed.", `"target":"target is local node."`},
		{"/nodes/pve1/qemu/100/migrate", url.Values{"target": {"pve9"}, "online": {"1"}}, "500 no such cluster node 'pve9'", ""},
		{"/nodes/pve1/qemu/100/migrate", url.Values{"target": {"pve2"}, "online": {"1"}, "force": {"1"}}, "400 Parameter verification failed.", `"force":"Only root may use this option."`},
		{"/nodes/pve1/qemu/100/migrate", url.Values{"target": {"pve2"}}, "500 can't migrate running VM without --online", ""},
		{"/nodes/pve1/qemu/104/migrate", url.Values{"target": {"pve2"}, "online": {"1"}}, "500 VM is locked (backup)", ""},
		{"/nodes/pve1/qemu/999/migrate", url.Values{"target": {"pve2"}}, "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist", ""},
		{"/nodes/pve1/lxc/200/migrate", url.Values{"target": {"pve2"}}, "500 can't migrate running container without --online or --restart", ""},
		{"/nodes/pve1/lxc/200/migrate", url.Values{"target": {"pve2"}, "with-local-disks": {"1"}}, "400 Parameter verification failed.", "property is not defined in schema"},
		{"/nodes/pve1/lxc/200/migrate", url.Values{"target": {"pve1"}, "restart": {"1"}}, "400 Parameter verification failed.", `"target":"target is local node."`},
	}
	for _, tt := range tests {
		a := post(t, s, tt.path, tt.form)
		if a.status != tt.status || !strings.Contains(string(a.raw), tt.errs) {
			t.Errorf("POST %s %s: %q %s, want %q with %s", tt.path, tt.form.Encode(), a.status, a.raw, tt.status, tt.errs)
		}
	}
	if n := len(s.Tasks()); n != 0 {
		t.Errorf("%d tasks started", n)
	}
}

// The worker: the guest moves when the task ends, with the real task
// types; what Proxmox finds only in the worker fails the task with
// "migration aborted" and the reason in the log, leaving the guest where
// it was.
func TestMigrateTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path string
		form       url.Values
		taskType   string
		exit       string
		logHas     string
		node       string
		status     string
	}{
		{"online VM", "/nodes/pve1/qemu/100/migrate", url.Values{"target": {"pve2"}, "online": {"1"}}, "qmigrate", "OK", "migration finished successfully", "pve2", "running"},
		{"local disks without with-local-disks", "/nodes/pve1/qemu/101/migrate", url.Values{"target": {"pve2"}, "online": {"1"}}, "qmigrate", "migration aborted",
			"can't live migrate attached local disks without with-local-disks option", "pve1", "running"},
		{"local disks with with-local-disks", "/nodes/pve1/qemu/101/migrate", url.Values{"target": {"pve2"}, "online": {"1"}, "with-local-disks": {"1"}}, "qmigrate", "OK", "", "pve2", "running"},
		{"local device", "/nodes/pve1/qemu/102/migrate", url.Values{"target": {"pve2"}}, "qmigrate", "migration aborted", "can't migrate VM which uses local devices: hostpci0", "pve1", "stopped"},
		{"storage on target", "/nodes/pve1/qemu/103/migrate", url.Values{"target": {"pve2"}}, "qmigrate", "OK", "", "pve2", "stopped"},
		{"storage missing on target", "/nodes/pve1/qemu/103/migrate", url.Values{"target": {"pve4"}}, "qmigrate", "migration aborted", "storage 'fast' is not available on node 'pve4'", "pve1", "stopped"},
		{"offline target", "/nodes/pve1/qemu/103/migrate", url.Values{"target": {"pve3"}}, "qmigrate", "migration aborted", "Can't connect to destination", "pve1", "stopped"},
		{"HA-managed", "/nodes/pve1/qemu/105/migrate", url.Values{"target": {"pve2"}, "online": {"1"}}, "hamigrate", "OK", "Requesting HA migration for VM 105 to node pve2", "pve2", "running"},
		{"container restart mode", "/nodes/pve1/lxc/200/migrate", url.Values{"target": {"pve2"}, "restart": {"1"}, "timeout": {"30"}}, "vzmigrate", "OK", "shutdown CT 200", "pve2", "running"},
		{"container online", "/nodes/pve1/lxc/200/migrate", url.Values{"target": {"pve2"}, "online": {"1"}}, "vzmigrate", "migration aborted", "lxc live migration is currently not implemented", "pve1", "running"},
		{"stopped container", "/nodes/pve1/lxc/201/migrate", url.Values{"target": {"pve2"}}, "vzmigrate", "OK", "", "pve2", "stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newMigrateFake(t, "")
			a := post(t, s, tt.path, tt.form)
			up, _ := a.body["data"].(string)
			if a.code != 200 || !strings.Contains(up, ":"+tt.taskType+":") || !strings.HasPrefix(up, "UPID:pve1:") {
				t.Fatalf("POST: %s %s", a.status, a.raw)
			}
			s.FinishTasks()
			task := s.Tasks()[0]
			if task.ExitStatus != tt.exit || !strings.Contains(strings.Join(task.Log, "\n"), tt.logHas) {
				t.Errorf("task %s: exit %q, log %q", task.Type, task.ExitStatus, task.Log)
			}
			vmid := 0
			for _, g := range migrateCluster("").Guests {
				if strings.Contains(tt.path, "/"+strconv.Itoa(g.VMID)+"/") {
					vmid = g.VMID
				}
			}
			g, _ := s.Guest(vmid)
			if g.Node != tt.node || g.Status != tt.status {
				t.Errorf("guest after the task: on %s, %s; want on %s, %s", g.Node, g.Status, tt.node, tt.status)
			}
		})
	}
}

// TestMigrateRootOnlyOptionsPerlTruth: qemu-server refuses force,
// migration_type and migration_network to non-root users only when the
// value is true in Perl ("$param->{force} && $authuser ne 'root@pam'"), so
// force=0 from a token migrates.
func TestMigrateRootOnlyOptionsPerlTruth(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	a := post(t, s, "/nodes/pve3/qemu/107/migrate", url.Values{"target": {"pve2"}, "force": {"0"}})
	if a.code != 200 {
		t.Fatalf("POST migrate force=0: %s %s, want 200 and a UPID", a.status, a.raw)
	}
	if up, _ := a.body["data"].(string); !upidRE.MatchString(up) {
		t.Errorf("data %s, want a qmigrate UPID", a.raw)
	}
}
