package proxmoxsafe

import (
	"net/url"
	"strings"
	"testing"
)

// The migrate class opens its precheck GET and its POST, for both guest
// types, and nothing else; without the class neither passes.
func TestTransportGuardMigrate(t *testing.T) {
	t.Parallel()
	migrate := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassMigrate}}
	others := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassPowerExtra, ClassResponder}}
	tests := []struct {
		name, method, path string
		policy             Policy
		pass               bool
	}{
		{"migrate qemu", "POST", "/nodes/pve1/qemu/100/migrate", migrate, true},
		{"migrate lxc", "POST", "/nodes/pve1/lxc/200/migrate", migrate, true},
		{"precheck qemu", "GET", "/nodes/pve1/qemu/100/migrate", migrate, true},
		{"precheck lxc", "GET", "/nodes/pve1/lxc/200/migrate", migrate, true},
		{"precheck with its target", "GET", "/nodes/pve1/qemu/100/migrate?target=pve2", migrate, true},
		{"precheck with another query", "GET", "/nodes/pve1/qemu/100/migrate?target=pve2&force=1", migrate, false},
		{"migrate escaped", "POST", "/nodes/pve1/qemu/100/migrate%2F..", migrate, false},
		{"migrate with PUT", "PUT", "/nodes/pve1/qemu/100/migrate", migrate, false},
		{"migrate has no start", "POST", "/nodes/pve1/qemu/100/status/start", migrate, false},
		{"migrate has no remote migration", "POST", "/nodes/pve1/qemu/100/remote_migrate", migrate, false},
		{"other classes have no migrate", "POST", "/nodes/pve1/qemu/100/migrate", others, false},
		{"other classes have no precheck", "GET", "/nodes/pve1/qemu/100/migrate", others, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, net := guardedClient(t, tc.policy)
			var err error
			if tc.method == "GET" {
				path, query, _ := strings.Cut(tc.path, "?")
				q, _ := url.ParseQuery(query)
				err = c.api.Get(t.Context(), path, q, nil)
			} else {
				err = c.api.Do(t.Context(), tc.method, tc.path, url.Values{}, nil)
			}
			if reached := net.n.Load() == 1; reached != tc.pass {
				t.Fatalf("%s %s reached the network: %v (err %v), want %v", tc.method, tc.path, reached, err, tc.pass)
			}
		})
	}
}
