package settings

import (
	"path/filepath"
	"testing"
)

// TestStateDir: XDG_STATE_HOME when absolute, else HOME's .local/state,
// else none; the default audit log, lock directory and elicitation key sit
// in it.
func TestStateDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"XDG_STATE_HOME", "/s", "HOME", "/h"}, "/s/proxmox-safe-mcp"},
		{[]string{"XDG_STATE_HOME", "rel", "HOME", "/h"}, "/h/.local/state/proxmox-safe-mcp"},
		{nil, ""},
	} {
		if got := StateDir(env(tc.env...)); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
	c, err := Parse(nil, env(with("PROXMOX_SAFE_READ_ONLY", "false", "HOME", "/h", "PROXMOX_SAFE_APPROVALS", "power=elicit")...))
	if err != nil {
		t.Fatal(err)
	}
	dir := "/h/.local/state/proxmox-safe-mcp"
	if c.AuditLog != filepath.Join(dir, DefaultAuditLogName) || !c.AuditDefault || c.LockDir != filepath.Join(dir, "locks") ||
		c.AuditKeyPath() != c.AuditLog+".key" || c.ElicitKeyPath(true) != filepath.Join(dir, ElicitKeyName) || c.ElicitKeyPath(false) != "" {
		t.Errorf("log %q (default %t) locks %q key %q elicit %q", c.AuditLog, c.AuditDefault, c.LockDir, c.AuditKeyPath(), c.ElicitKeyPath(true))
	}
}

// TestDemoGrantDir: the demo's grants sit in the state directory, apart
// from the grants a real server keeps beside its audit log; none without
// a state directory.
func TestDemoGrantDir(t *testing.T) {
	t.Parallel()
	c, err := Parse([]string{"--demo"}, env("XDG_STATE_HOME", "/s"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DemoGrantDir != "/s/proxmox-safe-mcp/demo/grants" || c.GrantDir != "" {
		t.Errorf("demo grants %q, grant dir %q", c.DemoGrantDir, c.GrantDir)
	}
	if d := DemoGrantDir(env()); d != "" {
		t.Errorf("without a state directory: %q", d)
	}
	if real := filepath.Join("/s/proxmox-safe-mcp", "grants"); c.DemoGrantDir == real {
		t.Error("the demo's grants sit where a real server's are")
	}
}
