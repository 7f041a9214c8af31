package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestMigrateRootOnlyOptionsPerlTruth: qemu-server refuses force,
// migration_type and migration_network to non-root users only when the
// value is true in Perl ("$param->{force} && $authuser ne 'root@pam'"), so
// force=0 from a token migrates.
func TestMigrateRootOnlyOptionsPerlTruth(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	a := post(t, s, "/nodes/pve3/qemu/107/migrate", url.Values{"target": {"pve2"}, "force": {"0"}})
	if a.code != 200 {
		t.Fatalf("POST migrate force=0: %s %s, want 200 and a UPID", a.status, a.raw)
	}
	if up, _ := a.body["data"].(string); !upidRE.MatchString(up) {
		t.Errorf("data %s, want a qmigrate UPID", a.raw)
	}
}
