package demo

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func parse(t *testing.T, args ...string) *settings.Config {
	t.Helper()
	c, err := settings.Parse(append([]string{"--demo"}, args...), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStartServesAPinnedClusterAndCleansUp: the config reaches the
// simulated cluster over pinned TLS with the fake's token, the banner
// names the version and how to approve, and closing removes the
// temporary audit log and grant directory of a run that recorded nothing.
func TestStartServesAPinnedClusterAndCleansUp(t *testing.T) {
	t.Parallel()
	cfg := parse(t, "--approvals", "power=grant")
	var stderr strings.Builder
	lib, closers, err := Start(cfg, "v-test", &stderr)
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		for _, p := range []string{cfg.AuditLog, cfg.GrantDir} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s left behind", p)
			}
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	if lib.Fingerprint == "" || !strings.HasPrefix(lib.URL, "https://") || len(lib.Policy.AllowedNodes) == 0 {
		t.Errorf("config %+v", lib)
	}
	client, err := proxmoxsafe.New(lib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Version(t.Context()); err != nil {
		t.Errorf("the demo cluster does not answer: %v", err)
	}
	for _, want := range []string{"v-test — DEMO MODE", "grant: approve the code", "PROXMOX_SAFE_GRANT_DIR=" + cfg.GrantDir} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestPrivilegesFollowTheProfile: the demo token holds the README role,
// plus what the profile's classes cannot work without.
func TestPrivilegesFollowTheProfile(t *testing.T) {
	t.Parallel()
	safe := privileges(parse(t))
	if !slices.Equal(safe, ReadmeRolePrivileges) {
		t.Errorf("safe: %v", safe)
	}
	if admin := privileges(parse(t, "--profile", "admin")); !slices.Contains(admin, "VM.Allocate") {
		t.Errorf("admin lacks VM.Allocate: %v", admin)
	}
}
