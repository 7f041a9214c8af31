package proxmoxsafe

import "testing"

// The routes the power-extra and snapshot-admin classes (the admin
// profile's additions to safe) open, and only those.
func TestTransportGuardAdmin(t *testing.T) {
	t.Parallel()
	extra := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPowerExtra}}
	snapAdmin := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassSnapshotAdmin}}
	safe := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot, ClassResponder}}
	tests := []guardCase{
		{"suspend qemu", "POST", "/nodes/pve1/qemu/100/status/suspend", extra, true},
		{"resume qemu", "POST", "/nodes/pve1/qemu/100/status/resume", extra, true},
		{"suspend lxc (experimental checkpoint)", "POST", "/nodes/pve1/lxc/200/status/suspend", extra, false},
		{"resume lxc", "POST", "/nodes/pve1/lxc/200/status/resume", extra, false},
		{"power-extra has no stop", "POST", "/nodes/pve1/qemu/100/status/stop", extra, false},
		{"power-extra has no start", "POST", "/nodes/pve1/qemu/100/status/start", extra, false},
		{"suspend escaped", "POST", "/nodes/pve1/qemu/100/status/suspend%2F..", extra, false},
		{"safe and responder have no suspend", "POST", "/nodes/pve1/qemu/100/status/suspend", safe, false},
		{"safe and responder have no resume", "POST", "/nodes/pve1/qemu/100/status/resume", safe, false},
		{"rollback qemu", "POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", snapAdmin, true},
		{"rollback lxc", "POST", "/nodes/pve1/lxc/200/snapshot/s1/rollback", snapAdmin, true},
		{"rollback escaped snapshot", "POST", "/nodes/pve1/qemu/100/snapshot/a%2F..%2Fx/rollback", snapAdmin, false},
		{"rollback with GET", "GET", "/nodes/pve1/qemu/100/snapshot/s1/rollback", snapAdmin, false},
		{"snapshot-admin has no snapshot create", "POST", "/nodes/pve1/qemu/100/snapshot", snapAdmin, false},
		{"snapshot-admin has no suspend", "POST", "/nodes/pve1/qemu/100/status/suspend", snapAdmin, false},
		{"safe and responder have no rollback", "POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", safe, false},
	}
	runGuardCases(t, tests)
}
