package proxmoxtest

import (
	"slices"
	"strings"
	"testing"
)

// destroyCluster has one guest per destroy situation.
func destroyCluster() *Cluster {
	return &Cluster{
		Name:  "lab",
		Nodes: []*Node{{Name: "pve1", Online: true}},
		Guests: []*Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "off", Status: "stopped"},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "on", Status: "running"},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "prot", Status: "stopped", Config: map[string]string{"protection": "1"}},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "ha", Status: "stopped", HAManaged: true, HAState: "stopped"},
			{VMID: 104, Node: "pve1", Type: "qemu", Name: "locked", Status: "stopped", Lock: "backup"},
			{VMID: 105, Node: "pve1", Type: "qemu", Name: "hibernated", Status: "stopped", Lock: "suspended"},
			{VMID: 106, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true},
			{VMID: 107, Node: "pve1", Type: "qemu", Name: "clone", Status: "stopped",
				Config: map[string]string{"scsi0": "local-lvm:base-106-disk-0/vm-107-disk-0,iothread=1,size=8G"}},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct-off", Status: "stopped"},
			{VMID: 201, Node: "pve1", Type: "lxc", Name: "ct-on", Status: "running"},
			{VMID: 202, Node: "pve1", Type: "lxc", Name: "ct-locked", Status: "stopped", Lock: "mounted"},
			{VMID: 203, Node: "pve1", Type: "lxc", Name: "ct-prot", Status: "stopped", Config: map[string]string{"protection": "1"}},
			{VMID: 204, Node: "pve1", Type: "lxc", Name: "ct-ha", Status: "stopped", HAManaged: true, HAState: "stopped"},
		},
	}
}

// TestDestroySynchronousErrors: what qemu-server and pve-container refuse
// before forking the worker, with their exact messages.
func TestDestroySynchronousErrors(t *testing.T) {
	t.Parallel()
	s := NewServer(destroyCluster())
	t.Cleanup(s.Close)
	tests := []struct{ path, status string }{
		{"/nodes/pve1/qemu/101", "500 VM 101 is running - destroy failed"},
		{"/nodes/pve1/qemu/102", "500 can't remove VM 102 - protection mode enabled"},
		{"/nodes/pve1/qemu/103", "500 unable to remove VM 103 - used in HA resources and purge parameter not set."},
		{"/nodes/pve1/qemu/100?skiplock=1", "400 Parameter verification failed."},
		{"/nodes/pve1/qemu/100?force=1", "400 Parameter verification failed."}, // qemu has no force
		{"/nodes/pve1/qemu/999", "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist"},
		{"/nodes/pve1/lxc/100", "500 Configuration file 'nodes/pve1/lxc/100.conf' does not exist"},
		{"/nodes/pve1/lxc/201", "500 unable to destroy CT 201 - container is running"},
		{"/nodes/pve1/lxc/202", "500 CT is locked (mounted)"},
		{"/nodes/pve1/lxc/203", "500 can't remove CT 203 - protection mode enabled"},
		{"/nodes/pve1/lxc/204", "500 unable to remove CT 204 - used in HA resources and purge parameter not set."},
		{"/nodes/pve1/lxc/200?skiplock=1", "400 Parameter verification failed."}, // lxc has no skiplock
	}
	for _, tt := range tests {
		if a := del(t, s, tt.path); a.status != tt.status {
			t.Errorf("DELETE %s: %q, want %q", tt.path, a.status, tt.status)
		}
	}
	if n := len(s.Tasks()); n != 0 {
		t.Errorf("%d tasks started, want none", n)
	}
	s.View(func(c *Cluster) {
		if len(c.Guests) != 13 {
			t.Errorf("%d guests left, want all 13", len(c.Guests))
		}
	})
}

// TestDestroyTasks: the worker's outcome, and the guest gone from the
// cluster (and HA) only when the task ends OK.
func TestDestroyTasks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, taskType, exit string
		gone                       bool
		logHas                     string
	}{
		{"stopped VM", "/nodes/pve1/qemu/100?purge=0&destroy-unreferenced-disks=1", "qmdestroy", "OK", true, ""},
		{"HA VM with purge", "/nodes/pve1/qemu/103?purge=1", "qmdestroy", "OK", true, "NOTE: removed VM 103 from HA resource configuration."},
		{"locked VM fails in the task", "/nodes/pve1/qemu/104", "qmdestroy", "VM is locked (backup)", false, ""},
		{"hibernated VM may be destroyed", "/nodes/pve1/qemu/105", "qmdestroy", "OK", true, ""},
		{"template with a linked clone", "/nodes/pve1/qemu/106", "qmdestroy", "base volume 'local-lvm:base-106-disk-0' is still in use by linked cloned", false, ""},
		{"the linked clone itself", "/nodes/pve1/qemu/107", "qmdestroy", "OK", true, ""},
		{"stopped CT", "/nodes/pve1/lxc/200", "vzdestroy", "OK", true, ""},
		{"running CT with force", "/nodes/pve1/lxc/201?force=1", "vzdestroy", "WARNINGS: 1", true, "forced to stop CT 201 before destroying!"},
		{"HA CT with purge", "/nodes/pve1/lxc/204?purge=1", "vzdestroy", "OK", true, "purging CT 204 from related configurations.."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(destroyCluster())
			t.Cleanup(s.Close)
			a := del(t, s, tt.path)
			upid, _ := a.body["data"].(string)
			if a.code != 200 || !strings.Contains(upid, ":"+tt.taskType+":") {
				t.Fatalf("DELETE %s: %s %s, want a %s UPID", tt.path, a.status, a.raw, tt.taskType)
			}
			vmid := strings.Split(strings.SplitN(tt.path, "?", 2)[0], "/")[4]
			listed := func() bool {
				for _, e := range listOf(t, get(t, s, "/cluster/resources?type=vm")) {
					if e["id"] == strings.Split(tt.path, "/")[3]+"/"+vmid {
						return true
					}
				}
				return false
			}
			if !listed() {
				t.Fatal("the guest left /cluster/resources before its task ended")
			}
			if err := waitStopped(t.Context(), s, "pve1", upid); err != nil {
				t.Fatal(err)
			}
			tasks := s.Tasks()
			task := tasks[len(tasks)-1]
			if task.ExitStatus != tt.exit {
				t.Errorf("exit status = %q, want %q", task.ExitStatus, tt.exit)
			}
			if tt.logHas != "" && !slices.ContainsFunc(task.Log, func(l string) bool { return strings.Contains(l, tt.logHas) }) {
				t.Errorf("task log %q lacks %q", task.Log, tt.logHas)
			}
			if listed() == tt.gone {
				t.Errorf("listed in /cluster/resources after the task = %v, want %v", !tt.gone, tt.gone)
			}
			for _, e := range listOf(t, get(t, s, "/cluster/ha/resources")) {
				if tt.gone && strings.HasSuffix(e["sid"].(string), ":"+vmid) {
					t.Errorf("HA resource %v still listed", e["sid"])
				}
			}
		})
	}
}
