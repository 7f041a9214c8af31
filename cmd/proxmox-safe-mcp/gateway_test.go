package main

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

// TestGatewayFlags: the admin profile lists api_get (read-only mode keeps
// it), only --gateway-write adds api_request, and read-only mode still
// drops it; api_get answers from the demo cluster, and api_request without
// approval is refused (its default levels, elicit then grant: the CLI
// cannot elicit, so a grant code is issued) with nothing done.
func TestGatewayFlags(t *testing.T) {
	t.Parallel()
	audit := func() string { return filepath.Join(t.TempDir(), "audit.jsonl") }
	for _, tc := range []struct {
		args         []string
		get, request bool
	}{
		{[]string{"--profile", "admin"}, true, false},
		{[]string{"--profile", "admin", "--read-only"}, true, false},
		{[]string{"--profile", "admin", "--gateway-write"}, true, true},
		{[]string{"--profile", "admin", "--gateway-write", "--read-only"}, true, false},
		{[]string{"--profile", "safe", "--gateway-write"}, false, true},
	} {
		args := append([]string{"--demo", "--audit-log", audit()}, tc.args...)
		out, errOut, code := runIn(t, map[string]string{}, append(args, "tools")...)
		if code != 0 {
			t.Fatalf("%v tools: exit %d\n%s", tc.args, code, errOut)
		}
		if got := strings.Contains(out, "api_get "); got != tc.get {
			t.Errorf("%v: api_get listed %v, want %v\n%s", tc.args, got, tc.get, out)
		}
		if got := strings.Contains(out, "api_request "); got != tc.request {
			t.Errorf("%v: api_request listed %v, want %v\n%s", tc.args, got, tc.request, out)
		}
	}
	out, errOut, code := runIn(t, map[string]string{}, "--demo", "--profile", "admin", "call", "api_get", `{"path":"/cluster/resources","params":{"type":"node"}}`)
	if code != 0 || !strings.Contains(out, `"node/pve1"`) {
		t.Errorf("api_get: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runIn(t, map[string]string{}, "--demo", "--profile", "admin", "--gateway-write", "--audit-log", audit(),
		"call", "api_request", `{"method":"POST","path":"/nodes/pve1/qemu/100/firewall/rules","params":{"action":"ACCEPT"}}`)
	if code == 0 || strings.Contains(out, "UPID:") || !strings.Contains(out+errOut, "no action was taken") {
		t.Errorf("api_request without approval: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestGatewayWriteUsesGrant: --gateway-write alone (its default levels
// are elicit, grant) is a class that uses the grant level, so the
// approval page is not refused as deciding grants nobody asks for.
func TestGatewayWriteUsesGrant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--demo", "--profile", "readonly"}, false},
		{[]string{"--demo", "--profile", "readonly", "--gateway-write"}, true},
	} {
		c, err := settings.Parse(append(tc.args, "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl")), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		c.ApprovalPage.Secret = settings.NewSecret(operatorSecret)
		_, _, err = approvalPage(c, "127.0.0.1:1", slog.New(slog.DiscardHandler))
		if refused := err != nil && strings.Contains(err.Error(), "no mutation class uses the grant level"); refused == tc.want {
			t.Errorf("%v: approval page err %v", tc.args, err)
		}
	}
}
