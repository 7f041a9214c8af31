package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestTargetString: the target as approval phrases spell it, with the
// snapshot when there is one.
func TestTargetString(t *testing.T) {
	t.Parallel()
	ref := proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}
	if got := ref.Target().String(); got != "pve1/qemu/101" {
		t.Errorf("Target().String() = %q", got)
	}
	snap := proxmoxsafe.Target{Node: "pve2", Type: proxmoxsafe.TypeLXC, VMID: 200, Snapshot: "before-upgrade"}
	if got := snap.String(); got != "pve2/lxc/200/before-upgrade" {
		t.Errorf("snapshot target = %q", got)
	}
}

// TestPowerActionsAndPaused: PowerActions lists what GuestPower declares,
// and a copy each time; a guest is paused only by QEMU's own status.
func TestPowerActionsAndPaused(t *testing.T) {
	t.Parallel()
	acts := proxmoxsafe.PowerActions()
	var declared []string
	for _, op := range proxmoxsafe.Operations() {
		if op.Name == proxmoxsafe.OpGuestPower {
			declared = op.ActionNames()
		}
	}
	for _, a := range acts {
		if !slices.Contains(declared, string(a)) {
			t.Errorf("PowerActions has %q, which GuestPower does not declare (%v)", a, declared)
		}
	}
	if len(acts) == 0 {
		t.Fatal("no power actions")
	}
	acts[0] = "changed"
	if proxmoxsafe.PowerActions()[0] == "changed" {
		t.Error("PowerActions returned the shared slice")
	}
	if !(proxmoxsafe.GuestState{Status: "running", QMPStatus: "paused"}).Paused() || (proxmoxsafe.GuestState{Status: "running", QMPStatus: "running"}).Paused() {
		t.Error("Paused must follow QMPStatus")
	}
}
