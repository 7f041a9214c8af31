package proxmoxsafe

import "testing"

// The routes the provision class opens: POST …/{vmid}/clone and the create
// POST on /nodes/{node}/{qemu,lxc}, nothing else (no delete, no config, no
// storage writes); GET /cluster/nextid is a read every policy may send.
func TestTransportGuardProvision(t *testing.T) {
	t.Parallel()
	prov := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassProvision}}
	others := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassPowerExtra, ClassResponder}}
	readOnly := Policy{AllowedNodes: []string{"pve1"}, ReadOnly: true}
	tests := []guardCase{
		{"clone qemu", "POST", "/nodes/pve1/qemu/9000/clone", prov, true},
		{"clone lxc", "POST", "/nodes/pve1/lxc/9100/clone", prov, true},
		{"create qemu", "POST", "/nodes/pve1/qemu", prov, true},
		{"create lxc", "POST", "/nodes/pve1/lxc", prov, true},
		{"create of another type", "POST", "/nodes/pve1/openvz", prov, false},
		{"create escaped", "POST", "/nodes/pve1/qemu%2F..%2Fstorage", prov, false},
		{"clone with GET", "GET", "/nodes/pve1/qemu/9000/clone", prov, false},
		{"provision has no destroy", "DELETE", "/nodes/pve1/qemu/9000", prov, false},
		{"provision has no config", "PUT", "/nodes/pve1/qemu/9000/config", prov, false},
		{"provision has no config POST", "POST", "/nodes/pve1/qemu/9000/config", prov, false},
		{"provision has no template conversion", "POST", "/nodes/pve1/qemu/9000/template", prov, false},
		{"provision has no storage upload", "POST", "/nodes/pve1/storage/local/upload", prov, false},
		{"provision has no storage allocation", "POST", "/nodes/pve1/storage/local/content", prov, false},
		{"provision has no start", "POST", "/nodes/pve1/qemu/9000/status/start", prov, false},
		{"nextid is a read", "GET", "/cluster/nextid", others, true},
		{"nextid in read-only mode", "GET", "/cluster/nextid", readOnly, true},
		{"other classes have no clone", "POST", "/nodes/pve1/qemu/9000/clone", others, false},
		{"other classes have no create", "POST", "/nodes/pve1/qemu", others, false},
		{"read-only has no create", "POST", "/nodes/pve1/lxc", readOnly, false},
	}
	runGuardCases(t, tests)
}
