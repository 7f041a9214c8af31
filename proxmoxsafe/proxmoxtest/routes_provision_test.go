package proxmoxtest

import (
	"net/url"
	"strings"
	"testing"
)

// provisionFake: the demo cluster plus an ISO and a template on pve1's
// "local", a shared "ceph" and VM 108 on it.
func provisionFake(t *testing.T) *Server {
	t.Helper()
	c := DemoCluster()
	c.Storages = DefaultStorages(c)
	c.Storages[0].Volumes = []string{"iso/debian-13.iso", "vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"}
	c.Storages = append(c.Storages, &Storage{ID: "ceph", Type: "rbd", Content: []string{"images", "rootdir"}, Shared: true, Total: 1 << 40})
	c.Guests = append(c.Guests, &Guest{VMID: 108, Node: "pve1", Type: "qemu", Name: "on-ceph", Status: "stopped", Template: true,
		Config: map[string]string{"scsi0": "ceph:base-108-disk-0,size=8G"}})
	s := NewServer(c)
	s.TaskPolls = -1 // tasks end at once
	t.Cleanup(s.Close)
	return s
}

// TestNextID: a string, like real servers (rec7 cluster-nextid.json:
// {"data":"101"}), and 400 "VM <id> already exists" for a used VMID (rec6
// errors/400-param-vm-exists.json).
func TestNextID(t *testing.T) {
	t.Parallel()
	s := provisionFake(t)
	if a := get(t, s, "/cluster/nextid"); a.code != 200 || string(a.raw) != `{"data":"109"}` {
		t.Errorf("nextid = %d %s", a.code, a.raw)
	}
	if a := get(t, s, "/cluster/nextid?vmid=555"); a.code != 200 || a.body["data"] != "555" {
		t.Errorf("nextid?vmid=555 = %d %s", a.code, a.raw)
	}
	a := get(t, s, "/cluster/nextid?vmid=100")
	if a.status != "400 Parameter verification failed." || !strings.Contains(string(a.raw), `"vmid":"VM 100 already exists"`) {
		t.Errorf("nextid?vmid=100 = %q %s", a.status, a.raw)
	}
}

// TestProvisionRouteErrors: the synchronous failures of create and clone,
// with the messages of qemu-server and pve-container.
func TestProvisionRouteErrors(t *testing.T) {
	t.Parallel()
	vm := url.Values{"vmid": {"150"}, "name": {"x"}, "scsi0": {"local-lvm:8"}, "net0": {"virtio,bridge=vmbr0"}}
	with := func(v url.Values, k, val string) url.Values {
		out := url.Values{}
		for kk, vv := range v {
			out[kk] = vv
		}
		out.Set(k, val)
		return out
	}
	ct := url.Values{"vmid": {"151"}, "hostname": {"c"}, "ostemplate": {"local:vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"}, "rootfs": {"local-lvm:8"}}
	tests := []struct {
		name, path string
		form       url.Values
		status     string
	}{
		{"VMID in use (qemu create)", "/nodes/pve1/qemu", with(vm, "vmid", "100"), "500 unable to create VM 100 - VM 100 already exists on node 'pve1'"},
		{"VMID in use (lxc create)", "/nodes/pve1/lxc", with(ct, "vmid", "200"), "500 CT 200 already exists on node 'pve1'"},
		{"storage without images", "/nodes/pve1/qemu", with(vm, "scsi0", "local:8"), "500 storage 'local' does not support vm images"},
		{"storage without rootdir", "/nodes/pve1/lxc", with(ct, "rootfs", "local:8"), "500 storage 'local' does not support container directories"},
		{"missing template", "/nodes/pve1/lxc", with(ct, "ostemplate", "local:vztmpl/nope.tar.zst"), "500 volume 'local:vztmpl/nope.tar.zst' does not exist"},
		{"missing ISO", "/nodes/pve1/qemu", with(vm, "ide2", "local:iso/nope.iso,media=cdrom"), "500 volume 'local:iso/nope.iso' does not exist"},
		{"indexed parameter out of range", "/nodes/pve1/qemu", with(vm, "scsi31", "local-lvm:8"), "400 Parameter verification failed."},
		{"linked clone of a VM that is no template", "/nodes/pve2/qemu/103/clone", url.Values{"newid": {"150"}, "full": {"0"}}, "500 Linked clone feature is not supported for drive 'scsi0'"},
		{"storage for a linked clone", "/nodes/pve2/qemu/105/clone", url.Values{"newid": {"150"}, "full": {"0"}, "storage": {"local-lvm"}}, "500 parameter 'storage' not allowed for linked clones"},
		{"full clone of a running container", "/nodes/pve1/lxc/200/clone", url.Values{"newid": {"150"}}, "500 Cannot do full clones on a running container without snapshots"},
		{"clone to another node from local storage", "/nodes/pve2/qemu/105/clone", url.Values{"newid": {"150"}, "target": {"pve1"}}, "500 can't clone VM to node 'pve1' (VM uses local storage)"},
		{"clone to non-shared storage on another node", "/nodes/pve1/qemu/108/clone", url.Values{"newid": {"150"}, "full": {"1"}, "target": {"pve2"}, "storage": {"local-lvm"}}, "500 can't clone to non-shared storage 'local-lvm'"},
		{"clone of a locked VM", "/nodes/pve1/qemu/102/clone", url.Values{"newid": {"150"}}, "500 VM is locked (backup)"},
		{"clone to a VMID in use", "/nodes/pve2/qemu/105/clone", url.Values{"newid": {"103"}}, "500 unable to create VM 103: config file already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := provisionFake(t)
			a := post(t, s, tt.path, tt.form)
			if a.status != tt.status {
				t.Errorf("status = %q, want %q (%s)", a.status, tt.status, a.raw)
			}
			if n := len(s.Tasks()); n != 0 {
				t.Errorf("%d tasks started", n)
			}
		})
	}
}

// TestCloneLifecycle: the clone exists locked from the request on, the
// UPID names the source with type qmclone, and when the task ends it is
// unlocked on the target node; a failed task removes it.
func TestCloneLifecycle(t *testing.T) {
	t.Parallel()
	s := provisionFake(t)
	s.TaskPolls = 3
	up := upidOf(t, post(t, s, "/nodes/pve1/qemu/108/clone", url.Values{"newid": {"150"}, "full": {"0"}, "target": {"pve2"}, "name": {"from-ceph"}, "pool": {"dev"}}))
	if !strings.Contains(up, ":qmclone:108:") {
		t.Errorf("UPID = %s, want a qmclone task of the source", up)
	}
	if g, ok := s.Guest(150); !ok || g.Lock != "clone" || g.Node != "pve1" || g.Template {
		t.Fatalf("clone while running = %+v, %v", g, ok)
	}
	s.FinishTasks()
	g, _ := s.Guest(150)
	if g.Lock != "" || g.Node != "pve2" || g.Name != "from-ceph" || g.Pool != "dev" {
		t.Errorf("clone after the task = %+v", g)
	}
	cfg := get(t, s, "/nodes/pve2/qemu/150/config")
	if disk, _ := cfg.body["data"].(map[string]any)["scsi0"].(string); disk != "ceph:base-108-disk-0/vm-150-disk-0,size=8G" {
		t.Errorf("scsi0 = %q", disk)
	}

	s.FailNextTask("clone failed: interrupted by signal")
	upidOf(t, post(t, s, "/nodes/pve3/lxc/203/clone", url.Values{"newid": {"151"}, "hostname": {"ct9"}}))
	if g, ok := s.Guest(151); !ok || g.Lock != "create" {
		t.Fatalf("container clone while running = %+v, %v", g, ok)
	}
	if src, _ := s.Guest(203); src.Lock != "disk" {
		t.Errorf("source lock while cloning = %q, want disk", src.Lock)
	}
	s.FinishTasks()
	if _, ok := s.Guest(151); ok {
		t.Error("a failed clone's guest is still there")
	}
	if src, _ := s.Guest(203); src.Lock != "" {
		t.Errorf("source lock after the failed clone = %q", src.Lock)
	}
}

// TestCreateLifecycle: qmcreate/vzcreate, locked "create" while running,
// the config reads back with the new volume, MAC and defaults.
func TestCreateLifecycle(t *testing.T) {
	t.Parallel()
	s := provisionFake(t)
	s.TaskPolls = 3
	up := upidOf(t, post(t, s, "/nodes/pve1/lxc", url.Values{"vmid": {"160"}, "hostname": {"c1"}, "ostemplate": {"local:vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"},
		"rootfs": {"local-lvm:8"}, "net0": {"name=eth0,bridge=vmbr0,ip=dhcp"}, "memory": {"1024"}, "ssh-public-keys": {"ssh-ed25519 AAAAC3 k"}}))
	if !strings.Contains(up, ":vzcreate:160:") {
		t.Errorf("UPID = %s", up)
	}
	if g, _ := s.Guest(160); g.Lock != "create" {
		t.Errorf("lock while creating = %q", g.Lock)
	}
	s.FinishTasks()
	cfg := get(t, s, "/nodes/pve1/lxc/160/config").body["data"].(map[string]any)
	if cfg["rootfs"] != "local-lvm:vm-160-disk-0,size=8G" || cfg["unprivileged"] != "1" || cfg["hostname"] != "c1" || cfg["lock"] != nil ||
		cfg["net0"] != "name=eth0,bridge=vmbr0,ip=dhcp,hwaddr=BC:24:11:00:00:A0,type=veth" || cfg["memory"] != "1024" {
		t.Errorf("config = %v", cfg)
	}
	if _, ok := cfg["ssh-public-keys"]; ok {
		t.Error("the SSH keys are not a config key")
	}
}
