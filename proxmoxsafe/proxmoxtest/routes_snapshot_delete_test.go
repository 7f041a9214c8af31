package proxmoxtest

import (
	"strings"
	"testing"
)

func snapCluster() *Cluster {
	return &Cluster{
		Name:  "lab",
		Nodes: []*Node{{Name: "pve1", Online: true}},
		Guests: []*Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "vm", Status: "running", Snapshots: []*Snapshot{
				{Name: "aa", SnapTime: 1700000000},
				{Name: "bb", Parent: "aa", SnapTime: 1700000100, Description: "cv4pve-autosnap"},
				{Name: "cc", Parent: "bb", SnapTime: 1700000200},
			}},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true, Snapshots: []*Snapshot{{Name: "aa", SnapTime: 1700000000}}},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "locked", Status: "running", Lock: "backup", Snapshots: []*Snapshot{{Name: "aa", SnapTime: 1700000000}}},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Snapshots: []*Snapshot{{Name: "xx", SnapTime: 1700000000}}},
		},
	}
}

func snapParents(t *testing.T, s *Server, path string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, e := range get(t, s, path).body["data"].([]any) {
		m := e.(map[string]any)
		out[m["name"].(string)] = m["parent"]
	}
	return out
}

func TestSnapshotDelete(t *testing.T) {
	t.Parallel()
	s := NewServer(snapCluster())
	t.Cleanup(s.Close)

	// The middle snapshot: a task; its child moves to its parent.
	up := upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/bb"))
	if !strings.Contains(up, ":qmdelsnapshot:100:") {
		t.Errorf("UPID %s is not a qmdelsnapshot task of 100", up)
	}
	if g, _ := s.Guest(100); len(g.Snapshots) != 3 {
		t.Error("the snapshot went before its task ended")
	}
	if st, _ := pollUntilStopped(t, s, "pve1", up); st["exitstatus"] != "OK" {
		t.Fatalf("task: %v", st)
	}
	if p := snapParents(t, s, "/nodes/pve1/qemu/100/snapshot"); len(p) != 3 || p["cc"] != "aa" || p["current"] != "cc" {
		t.Errorf("after deleting bb: parents %v, want cc on aa, current on cc", p)
	}
	// The snapshot the current state is based on: current moves to its parent.
	up = upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/cc"))
	pollUntilStopped(t, s, "pve1", up)
	if p := snapParents(t, s, "/nodes/pve1/qemu/100/snapshot"); len(p) != 2 || p["current"] != "aa" {
		t.Errorf("after deleting cc: parents %v, want current on aa", p)
	}
	// LXC: vzdelsnapshot.
	up = upidOf(t, del(t, s, "/nodes/pve1/lxc/200/snapshot/xx"))
	if !strings.Contains(up, ":vzdelsnapshot:200:") {
		t.Errorf("UPID %s is not a vzdelsnapshot task", up)
	}
	pollUntilStopped(t, s, "pve1", up)
	if g, _ := s.Guest(200); len(g.Snapshots) != 0 {
		t.Errorf("lxc snapshots left: %v", g.Snapshots)
	}
}

// Every check of snapshot_delete runs in the worker: the DELETE answers a
// UPID and the task fails, changing nothing.
func TestSnapshotDeleteFailsInTask(t *testing.T) {
	t.Parallel()
	s := NewServer(snapCluster())
	t.Cleanup(s.Close)
	for _, tt := range []struct{ path, exit string }{
		{"/nodes/pve1/qemu/100/snapshot/nope", "snapshot 'nope' does not exist"},
		{"/nodes/pve1/qemu/100/snapshot/current", "snapshot 'current' does not exist"},
		{"/nodes/pve1/qemu/101/snapshot/aa", "you can't delete a snapshot if vm is a template"},
		{"/nodes/pve1/qemu/102/snapshot/aa", "VM is locked (backup)"},
	} {
		up := upidOf(t, del(t, s, tt.path))
		st, _ := pollUntilStopped(t, s, "pve1", up)
		if st["exitstatus"] != tt.exit {
			t.Errorf("DELETE %s: exit %v, want %q", tt.path, st["exitstatus"], tt.exit)
		}
		if log := taskLog(t, s, "pve1", up); log[len(log)-1] != "TASK ERROR: "+tt.exit {
			t.Errorf("DELETE %s: log %v", tt.path, log)
		}
	}
	// A storage failure inside the task (FailNextTask) keeps the snapshot.
	s.FailNextTask("zfs error: cannot destroy snapshot: dataset is busy")
	up := upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/aa"))
	if st, _ := pollUntilStopped(t, s, "pve1", up); st["exitstatus"] != "zfs error: cannot destroy snapshot: dataset is busy" {
		t.Errorf("forced failure: %v", st)
	}
	if g, _ := s.Guest(100); len(g.Snapshots) != 3 {
		t.Errorf("failed deletion changed the model: %d snapshots", len(g.Snapshots))
	}
	// Synchronous errors: the guest must exist; the name must be a configid.
	if a := del(t, s, "/nodes/pve1/qemu/999/snapshot/aa"); a.code != 500 || !strings.Contains(a.status, "999.conf' does not exist") {
		t.Errorf("unknown guest: %q", a.status)
	}
	if a := del(t, s, "/nodes/pve1/qemu/100/snapshot/1bad"); a.code != 400 {
		t.Errorf("bad name: %q", a.status)
	}
	if a := get(t, s, "/nodes/pve1/qemu/100/snapshot/aa"); a.code != 501 {
		t.Errorf("GET on a snapshot (its index) is not modelled: %q", a.status)
	}
}
