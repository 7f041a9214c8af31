package routes

import "testing"

// TestGatewayRoute: the gateway's route lets its methods through on any
// path of allowed bytes within the bounds, on an allowed node only.
func TestGatewayRoute(t *testing.T) {
	t.Parallel()
	r := gatewayRoute(map[string]bool{"pve1": true}, "GET")
	long := make([]string, MaxSegments+1)
	for i := range long {
		long[i] = "a"
	}
	for _, tc := range []struct {
		name   string
		method string
		segs   []string
		want   bool
	}{
		{"a cluster path", "GET", []string{"cluster", "resources"}, true},
		{"an allowed node", "GET", []string{"nodes", "pve1", "qemu"}, true},
		{"the node list", "GET", []string{"nodes"}, true},
		{"another node", "GET", []string{"nodes", "pve2", "qemu"}, false},
		{"another node, other case", "GET", []string{"NODES", "pve2"}, false},
		{"another method", "POST", []string{"cluster", "resources"}, false},
		{"no segment", "GET", nil, false},
		{"too many segments", "GET", long, false},
		{"a byte outside the path rules", "GET", []string{"cluster", "a b"}, false},
		{"a percent sign", "GET", []string{"cluster", "a%2f"}, false},
		{"a token user's UPID", "GET", []string{"cluster", "UPID:pve1:0:0:0:x:100:u@pve!tok:"}, true},
	} {
		if got := r.allows(tc.method, "", tc.segs, ""); got != tc.want {
			t.Errorf("%s: %s %q = %v, want %v", tc.name, tc.method, tc.segs, got, tc.want)
		}
	}
}

// TestGatewayWriteRouteLeavesClassRoutes: the gateway's write route never
// lets through what a class's write route describes, whatever the method
// (only that class's route does); reads and other paths pass.
func TestGatewayWriteRouteLeavesClassRoutes(t *testing.T) {
	t.Parallel()
	nodes := map[string]bool{"pve1": true}
	w, r := gatewayRoute(nodes, "POST", "PUT", "DELETE"), gatewayRoute(nodes, "GET")
	for _, tc := range []struct {
		method string
		segs   []string
		want   bool
	}{
		{"DELETE", []string{"nodes", "pve1", "qemu", "100"}, false},
		{"POST", []string{"nodes", "pve1", "lxc", "200", "status", "stop"}, false},
		{"PUT", []string{"nodes", "pve1", "qemu", "100", "resize"}, false},
		{"POST", []string{"nodes", "pve1", "qemu", "100", "config"}, false},
		{"POST", []string{"nodes", "pve1", "qemu"}, false},
		{"DELETE", []string{"nodes", "pve1", "qemu", "100", "snapshot", "s1"}, false},
		{"POST", []string{"nodes", "pve1", "qemu", "100", "firewall", "rules"}, true},
		{"POST", []string{"cluster", "ha", "groups"}, true},
	} {
		if got := w.allows(tc.method, "", tc.segs, ""); got != tc.want {
			t.Errorf("%s %q = %v, want %v", tc.method, tc.segs, got, tc.want)
		}
	}
	// The migrate precheck is a class's GET: reads are the read route's.
	if !r.allows("GET", "", []string{"nodes", "pve1", "qemu", "100", "migrate"}, "") {
		t.Error("a GET of a class's read route is refused")
	}
}
