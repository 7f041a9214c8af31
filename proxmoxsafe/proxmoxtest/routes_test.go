package proxmoxtest

import (
	"maps"
	"testing"
)

// TestFindRoute: a route matches on its method and every literal segment;
// a {name} segment takes any non-empty segment, and the names come back.
func TestFindRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, path string
		found        bool
		uri          map[string]string
	}{
		{"POST", "/nodes/pve1/qemu/100/status/stop", true, map[string]string{"node": "pve1", "vmid": "100"}},
		{"POST", "/nodes/pve1/lxc/200/status/start/", true, map[string]string{"node": "pve1", "vmid": "200"}},
		{"GET", "/nodes/pve1/qemu/100/status/stop", false, nil},
		{"POST", "/nodes//qemu/100/status/stop", false, nil},
		{"POST", "/nodes/pve1/qemu/100/status/stop/now", false, nil},
		{"GET", "/version", true, map[string]string{}},
	}
	for _, tt := range tests {
		rt, uri := findRoute(tt.method, tt.path)
		if (rt != nil) != tt.found || !maps.Equal(uri, tt.uri) {
			t.Errorf("findRoute(%s %s) = %v, %v; want found %v with %v", tt.method, tt.path, rt != nil, uri, tt.found, tt.uri)
		}
	}
}
