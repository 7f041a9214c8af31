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

// TestApproveCommand: the demo's own grant directory is approved with
// --demo approve; any other (a --grant-dir flag, a temporary directory)
// is named for plain approve, quoted for the shell when it must be.
func TestApproveCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ grantDir, demoDir, want string }{
		{"/s/proxmox-safe-mcp/demo/grants", "/s/proxmox-safe-mcp/demo/grants", "proxmox-safe-mcp --demo approve"},
		{"/tmp/g", "/s/proxmox-safe-mcp/demo/grants", "PROXMOX_SAFE_GRANT_DIR=/tmp/g proxmox-safe-mcp approve"},
		{"/tmp/my grants/it's", "", `PROXMOX_SAFE_GRANT_DIR='/tmp/my grants/it'\''s' proxmox-safe-mcp approve`},
	} {
		cfg := &settings.Config{GrantDir: tc.grantDir, DemoGrantDir: tc.demoDir}
		if got := ApproveCommand(cfg); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.grantDir, got, tc.want)
		}
	}
}

// TestStartKeepsTheDemoGrants: with a state directory the demo's grants
// sit in its own directory there, which closing leaves in place (a grant
// a call asked for must outlive the call); a call says its state starts
// afresh on every call.
func TestStartKeepsTheDemoGrants(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	cfg, err := settings.Parse([]string{"--demo", "--approvals", "power=grant", "--audit-log", state + "/audit.jsonl", "call", "list_guests"},
		func(k string) (string, bool) { return state, k == "XDG_STATE_HOME" })
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.DemoGrantDir, 0o700); err != nil { // as an earlier call's grant store left it
		t.Fatal(err)
	}
	var stderr strings.Builder
	_, closers, err := Start(cfg, "v-test", &stderr)
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := state + "/proxmox-safe-mcp/demo/grants"; cfg.GrantDir != want {
		t.Errorf("grant dir %q, want %q", cfg.GrantDir, want)
	}
	if _, err := os.Stat(cfg.GrantDir); err != nil {
		t.Errorf("closing removed the demo's grants: %v", err)
	}
	if !strings.Contains(stderr.String(), "its state starts afresh on every call") {
		t.Errorf("the call line does not say the state resets: %s", stderr.String())
	}
}

// TestBannerKeepsTheFlags: the client configurations the stdio banner
// shows start the same demo — its profile and approval levels, --demo
// once — and the Claude Code line is one a shell runs as shown.
func TestBannerKeepsTheFlags(t *testing.T) {
	t.Parallel()
	cfg := parse(t, "--profile", "admin", "--approvals", "power=none,phrase", "--demo")
	command, args := clientCommand(cfg.Flags)
	if want := []string{"--demo", "--profile=admin", "--approvals=power=none,phrase"}; !slices.Equal(args[len(args)-len(want):], want) || slices.Index(args, "--demo") != len(args)-len(want) {
		t.Errorf("args %q, want them to end with %q and hold --demo once", args, want)
	}
	var banner strings.Builder
	printBanner(&banner, "v-test", "https://127.0.0.1:1", []string{"pve1"}, 1, cfg, cfg.Classes(), "APPROVE shutdown pve1/qemu/100")
	if want := claudeAdd(command, args); !strings.Contains(banner.String(), "From Claude Code:\n    "+want+"\n") || !strings.HasSuffix(want, " --demo --profile=admin --approvals=power=none,phrase") {
		t.Errorf("banner lacks %q:\n%s", want, banner.String())
	}
	if got := claudeAdd("/opt/my tools/psm", []string{"--demo"}); got != "claude mcp add proxmox-safe-demo -- '/opt/my tools/psm' --demo" {
		t.Errorf("claudeAdd quoted %q", got)
	}
}
