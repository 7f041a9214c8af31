package proxmoxsafe

import "testing"

// TestDescribeAndGuestPath: a guest named for humans (what effects and
// refusals say) and the API path of one of its resources.
func TestDescribeAndGuestPath(t *testing.T) {
	t.Parallel()
	vm := Target{Node: "pve1", Type: TypeQEMU, VMID: 101}
	ct := Target{Node: "pve2", Type: TypeLXC, VMID: 200}
	if got := describe(vm, GuestState{Name: "web1"}); got != "VM 101 (web1) on pve1" {
		t.Errorf("describe(vm) = %q", got)
	}
	if got := describe(ct, GuestState{}); got != "container 200 on pve2" {
		t.Errorf("describe(ct) = %q", got)
	}
	if got := guestPath(vm, "status", "current"); got != "/nodes/pve1/qemu/101/status/current" {
		t.Errorf("guestPath = %q", got)
	}
	if got := guestPath(Target{Node: "pve1", Type: TypeQEMU, VMID: 100}, "snapshot", "a/b"); got != "/nodes/pve1/qemu/100/snapshot/a%2Fb" {
		t.Errorf("guestPath escapes a segment: %q", got)
	}
}
