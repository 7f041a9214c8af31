package proxmoxsafe

import "testing"

// The routes the config class opens, and only those: resize for both
// types, the VM's asynchronous POST …/config and the container's PUT.
func TestTransportGuardConfig(t *testing.T) {
	t.Parallel()
	cfg := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassConfig}}
	safe := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot, ClassResponder, ClassPowerExtra, ClassSnapshotAdmin}}
	ro := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassConfig}, ReadOnly: true}
	tests := []guardCase{
		{"resize qemu", "PUT", "/nodes/pve1/qemu/100/resize", cfg, true},
		{"resize lxc", "PUT", "/nodes/pve1/lxc/200/resize", cfg, true},
		{"qemu config POST", "POST", "/nodes/pve1/qemu/100/config", cfg, true},
		{"lxc config PUT", "PUT", "/nodes/pve1/lxc/200/config", cfg, true},
		{"pending with the class", "GET", "/nodes/pve1/qemu/100/pending", cfg, true},
		{"pending is the config class's read", "GET", "/nodes/pve1/qemu/100/pending", safe, false},
		{"qemu config PUT (sync variant not used)", "PUT", "/nodes/pve1/qemu/100/config", cfg, false},
		{"lxc config POST does not exist", "POST", "/nodes/pve1/lxc/200/config", cfg, false},
		{"resize with POST", "POST", "/nodes/pve1/qemu/100/resize", cfg, false},
		{"resize escaped", "PUT", "/nodes/pve1/qemu/100/resize%2F..", cfg, false},
		{"config has no unlink", "PUT", "/nodes/pve1/qemu/100/unlink", cfg, false},
		{"config has no move disk", "POST", "/nodes/pve1/qemu/100/move_disk", cfg, false},
		{"config has no power", "POST", "/nodes/pve1/qemu/100/status/start", cfg, false},
		{"other classes have no resize", "PUT", "/nodes/pve1/qemu/100/resize", safe, false},
		{"other classes have no config write", "POST", "/nodes/pve1/qemu/100/config", safe, false},
		{"read-only wins", "PUT", "/nodes/pve1/lxc/200/config", ro, false},
	}
	runGuardCases(t, tests)
}
