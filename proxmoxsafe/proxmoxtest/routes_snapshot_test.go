package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestSnapshotListEndsWithCurrent: the list holds the real snapshots,
// oldest first, then "current" whose parent is the newest; only a VM's
// entries say whether they hold RAM (vmstate).
func TestSnapshotListEndsWithCurrent(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	vm := listOf(t, get(t, s, "/nodes/pve1/qemu/100/snapshot"))
	if len(vm) != 3 || vm[0]["name"] != "pre-upgrade" || vm[1]["parent"] != "pre-upgrade" || vm[1]["vmstate"] != float64(1) {
		t.Fatalf("VM 100 snapshots = %v", vm)
	}
	if cur := vm[2]; cur["name"] != "current" || cur["parent"] != "weekly-2025-01" || cur["running"] != float64(1) {
		t.Errorf("current = %v", cur)
	}
	ct := listOf(t, get(t, s, "/nodes/pve2/lxc/204/snapshot"))
	if len(ct) != 2 || ct[0]["vmstate"] != nil || ct[1]["parent"] != "before-migration" {
		t.Errorf("container 204 snapshots = %v", ct)
	}
	if none := listOf(t, get(t, s, "/nodes/pve2/qemu/103/snapshot")); len(none) != 1 || none[0]["parent"] != nil {
		t.Errorf("VM 103 without snapshots = %v", none)
	}
}

// TestSnapshotCreateReservedNames: each type refuses its own reserved
// names at once (500), and the other type's name is only a task.
func TestSnapshotCreateReservedNames(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	for _, tt := range []struct{ path, name, status string }{
		{"/nodes/pve1/qemu/100/snapshot", "pending", "500 unable to use snapshot name 'pending' (reserved name)"},
		{"/nodes/pve1/lxc/200/snapshot", "vzdump", "500 unable to use snapshot name 'vzdump' (reserved name)"},
		{"/nodes/pve1/qemu/100/snapshot", "vzdump", "200 OK"},
	} {
		if a := post(t, s, tt.path, url.Values{"snapname": {tt.name}}); a.status != tt.status {
			t.Errorf("%s %q: %s, want %s", tt.path, tt.name, a.status, tt.status)
		}
	}
}
