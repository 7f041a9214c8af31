package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestConfigParamsAsyncOnly: background_delay belongs to the asynchronous
// POST .../config only (qemu-server), within 1..30; the PUT and a
// container's config do not know it.
func TestConfigParamsAsyncOnly(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const undefined = "property is not defined in schema and the schema does not allow additional properties"
	tests := []struct {
		method, path, delay string
		code                int
		msg                 string
	}{
		{"POST", "/nodes/pve2/qemu/103/config", "5", 200, ""},
		{"POST", "/nodes/pve2/qemu/103/config", "31", 400, "value must have a maximum value of 30"},
		{"PUT", "/nodes/pve2/qemu/103/config", "5", 400, undefined},
		{"PUT", "/nodes/pve1/lxc/200/config", "5", 400, undefined},
	}
	for _, tt := range tests {
		a := call(t, s, tt.method, tt.path, url.Values{"cores": {"2"}, "background_delay": {tt.delay}}, "")
		errs, _ := a.body["errors"].(map[string]any)
		if a.code != tt.code || (tt.msg != "" && errs["background_delay"] != tt.msg) {
			t.Errorf("%s %s background_delay=%s: %s %v, want %d %q", tt.method, tt.path, tt.delay, a.status, errs, tt.code, tt.msg)
		}
	}
}
