package proxmoxsafe

import (
	"net/url"
	"testing"
)

// The destroy class opens DELETE of a guest with purge and
// destroy-unreferenced-disks only: never skiplock, never force.
func TestTransportGuardDestroy(t *testing.T) {
	t.Parallel()
	// The phrase level: the default levels need approvers this test has not.
	destroy := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassDestroy}, Approvals: map[Class][]ApprovalLevel{ClassDestroy: {LevelPhrase}}}
	others := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassPowerExtra, ClassResponder}}
	both := url.Values{"purge": {"1"}, "destroy-unreferenced-disks": {"0"}}
	tests := []struct {
		name, method, path string
		query              url.Values
		policy             Policy
		pass               bool
	}{
		{"destroy qemu", "DELETE", "/nodes/pve1/qemu/100", both, destroy, true},
		{"destroy lxc", "DELETE", "/nodes/pve1/lxc/200", both, destroy, true},
		{"destroy without parameters", "DELETE", "/nodes/pve1/qemu/100", url.Values{}, destroy, true},
		{"skiplock", "DELETE", "/nodes/pve1/qemu/100", url.Values{"purge": {"1"}, "skiplock": {"1"}}, destroy, false},
		{"container force", "DELETE", "/nodes/pve1/lxc/200", url.Values{"force": {"1"}}, destroy, false},
		{"escaped vmid", "DELETE", "/nodes/pve1/qemu/100%2F..", both, destroy, false},
		{"a node", "DELETE", "/nodes/pve1", both, destroy, false},
		{"a snapshot is not the guest", "DELETE", "/nodes/pve1/qemu/100/snapshot/s1", url.Values{}, destroy, false},
		{"destroy with POST", "POST", "/nodes/pve1/qemu/100", url.Values{}, destroy, false},
		{"every other class together has no destroy", "DELETE", "/nodes/pve1/qemu/100", both, others, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, net := guardedClient(t, tc.policy)
			err := c.api.Do(t.Context(), tc.method, tc.path, tc.query, nil)
			if reached := net.n.Load() == 1; reached != tc.pass {
				t.Fatalf("%s %s?%s reached the network: %v (err %v), want %v", tc.method, tc.path, tc.query.Encode(), reached, err, tc.pass)
			}
		})
	}
}
