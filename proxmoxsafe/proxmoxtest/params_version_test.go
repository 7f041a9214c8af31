package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestNewerParameterRefusedByOlderVersion: a parameter the cluster's PVE
// version does not have yet is refused like any unknown property (400,
// Proxmox's errors shape, nothing done), and accepted on the version that
// has it (schema-subset-pve8.4.json lacks with-conntrack-state).
func TestNewerParameterRefusedByOlderVersion(t *testing.T) {
	t.Parallel()
	form := url.Values{"target": {"pve2"}, "with-conntrack-state": {"1"}}
	for _, tc := range []struct {
		version string
		code    int
	}{{"8.4.1", 400}, {DefaultVersion, 200}} {
		c := DemoCluster()
		c.Version = tc.version
		s := NewServer(c)
		a := post(t, s, "/nodes/pve3/qemu/107/migrate", form)
		if a.code != tc.code {
			t.Errorf("%s: POST migrate with with-conntrack-state: %d %s, want %d", tc.version, a.code, a.raw, tc.code)
		}
		if tc.code == 400 {
			errs, _ := a.body["errors"].(map[string]any)
			if errs["with-conntrack-state"] != "property is not defined in schema and the schema does not allow additional properties" ||
				len(errs) != 1 || a.body["data"] != nil {
				t.Errorf("%s: body %s, want Proxmox's unknown-property error", tc.version, a.raw)
			}
			if s.cluster.guest(107).Node != "pve3" {
				t.Errorf("%s: the refused migration moved the guest", tc.version)
			}
		}
		s.Close()
	}
}
