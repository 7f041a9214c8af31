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
