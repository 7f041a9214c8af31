package proxmoxsafe

import "testing"

// The routes the responder and snapshot-admin classes open, and only those.
func TestTransportGuardResponder(t *testing.T) {
	t.Parallel()
	responder := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassResponder}}
	admin := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassSnapshotAdmin}}
	power := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot}}
	tests := []guardCase{
		{"responder start", "POST", "/nodes/pve1/lxc/200/status/start", responder, true},
		{"responder reboot", "POST", "/nodes/pve1/qemu/100/status/reboot", responder, true},
		{"responder reset qemu", "POST", "/nodes/pve1/qemu/100/status/reset", responder, true},
		{"responder reset lxc", "POST", "/nodes/pve1/lxc/200/status/reset", responder, false},
		{"responder agent ping", "POST", "/nodes/pve1/qemu/100/agent/ping", responder, true},
		{"responder agent ping lxc", "POST", "/nodes/pve1/lxc/200/agent/ping", responder, false},
		{"responder agent exec", "POST", "/nodes/pve1/qemu/100/agent/exec", responder, false},
		{"responder snapshot delete", "DELETE", "/nodes/pve1/qemu/100/snapshot/auto1", responder, true},
		{"responder stop", "POST", "/nodes/pve1/qemu/100/status/stop", responder, false},
		{"responder shutdown", "POST", "/nodes/pve1/qemu/100/status/shutdown", responder, false},
		{"responder snapshot create", "POST", "/nodes/pve1/qemu/100/snapshot", responder, false},
		{"responder rollback", "POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", responder, false},
		{"responder delete guest", "DELETE", "/nodes/pve1/qemu/100", responder, false},
		{"responder delete escaped snapshot", "DELETE", "/nodes/pve1/qemu/100/snapshot/a%2F..%2F..", responder, false},
		{"admin snapshot delete", "DELETE", "/nodes/pve1/lxc/200/snapshot/old", admin, true},
		{"admin reset", "POST", "/nodes/pve1/qemu/100/status/reset", admin, false},
		{"power has no snapshot delete", "DELETE", "/nodes/pve1/qemu/100/snapshot/auto1", power, false},
		{"power has no agent ping", "POST", "/nodes/pve1/qemu/100/agent/ping", power, false},
	}
	runGuardCases(t, tests)
}
