package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestLibConfigError checks that real library config errors name our
// variables.
func TestLibConfigError(t *testing.T) {
	t.Parallel()
	cfg := &Config{SecretFrom: "PVE_API_TOKEN_SECRET_FILE"}
	base := func() proxmoxsafe.Config {
		return proxmoxsafe.Config{URL: "https://pve:8006", TokenID: "a@pve!tok", TokenSecret: "s"}
	}
	tests := []struct {
		mod  func(*proxmoxsafe.Config)
		want string
	}{
		{func(c *proxmoxsafe.Config) { c.URL = "http://pve:8006" }, "PVE_URL (--url): URL uses plain http://"},
		{func(c *proxmoxsafe.Config) { c.Fingerprint = "zz" }, "PVE_TLS_FINGERPRINT (--tls-fingerprint): Fingerprint must be"},
		{func(c *proxmoxsafe.Config) { c.TokenSecret = "a b" }, "PVE_API_TOKEN_SECRET_FILE: TokenSecret contains"},
		{func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = []string{"x/y"} }, "PVE_ALLOWED_NODES (--allowed-nodes): Policy.AllowedNodes: "},
		{func(c *proxmoxsafe.Config) { c.Timeout = -1 }, "invalid configuration: Timeout must not be negative"},
	}
	for _, tc := range tests {
		c := base()
		tc.mod(&c)
		_, err := proxmoxsafe.New(c)
		if err == nil {
			t.Fatalf("config accepted: %+v", c)
		}
		if got := cfg.LibraryError(err).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v → %q, want prefix %q", err, got, tc.want)
		}
	}
}

// TestHTTPOptionError: an mcphttp option error names the setting to fix.
func TestHTTPOptionError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ msg, want string }{
		{"mcphttp: allowed origin \"x\": bad", "MCP_ALLOWED_ORIGINS (--allowed-origins): allowed origin"},
		{"mcphttp: allowed host \"x\": bad", "MCP_ALLOWED_HOSTS (--allowed-hosts): allowed host"},
		{"mcphttp: Path must start with /", "MCP_HTTP_PATH (--http-path): Path must"},
		{"mcphttp: ResourceMetadata.Resource is bad", "MCP_PUBLIC_URL (--public-url): "},
		{"mcphttp: the authorization server is bad", "MCP_AUTH_SERVER (--auth-server): "},
		{"mcphttp: other", "invalid HTTP configuration: other"},
	} {
		if got := HTTPOptionError(errors.New(tc.msg)); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q → %q, want prefix %q", tc.msg, got, tc.want)
		}
	}
}
