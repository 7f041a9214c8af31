package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTTPConfig checks the startup rules of the HTTP transport without
// starting anything.
func TestHTTPConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte(httpToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	real := map[string]string{
		"PVE_URL": "https://pve.example.com:8006", "PVE_API_TOKEN_ID": "a@pve!mcp",
		"PVE_API_TOKEN_SECRET": httpCanary, "PROXMOX_SAFE_READ_ONLY": "true",
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" = OK
	}{
		{"demo loopback without token", []string{"--demo", "--http", "127.0.0.1:8000"}, nil, ""},
		{"demo port only", []string{"--demo", "--http", "8000"}, nil, ""},
		{"demo localhost", []string{"--demo", "--http", "localhost:8000"}, nil, ""},
		{"demo ipv6 loopback", []string{"--demo", "--http", "[::1]:8000"}, nil, ""},
		{"demo all interfaces without token", []string{"--demo", "--http", "0.0.0.0:8000"}, nil, "is not a loopback address"},
		{"demo empty host without token", []string{"--demo", "--http", ":8000"}, nil, "is not a loopback address"},
		{"demo LAN without token", []string{"--demo", "--http", "192.0.2.5:8000"}, nil, "is not a loopback address"},
		{"env addr all interfaces", []string{"--demo"}, map[string]string{"MCP_HTTP_ADDR": "0.0.0.0:8000"}, "is not a loopback address"},
		{"all interfaces with token", []string{"--demo", "--http", "0.0.0.0:8000"}, map[string]string{"MCP_AUTH_TOKEN": httpToken}, ""},
		{"all interfaces, explicit opt-out", []string{"--demo", "--http", "0.0.0.0:8000", "--allow-unauthenticated-remote"}, nil, ""},
		{"real cluster loopback without token", []string{"--http", "127.0.0.1:8000"}, real, "needs MCP_AUTH_TOKEN"},
		{"real cluster with token", []string{"--http", "127.0.0.1:8000"}, with(real, "MCP_AUTH_TOKEN", httpToken), ""},
		{"real cluster with token file", []string{"--http", "127.0.0.1:8000", "--auth-token-file", tokFile}, real, ""},
		{"token and file", []string{"--http", "127.0.0.1:8000", "--auth-token-file", tokFile}, with(real, "MCP_AUTH_TOKEN", httpToken), "set only one of"},
		{"short token", []string{"--demo", "--http", "8000"}, map[string]string{"MCP_AUTH_TOKEN": "secret"}, "at least 32"},
		{"token equals the Proxmox secret", []string{"--http", "8000"}, with(real, "PVE_API_TOKEN_SECRET", httpToken, "MCP_AUTH_TOKEN", httpToken), "must differ"},
		{"host name", []string{"--demo", "--http", "mcp.example.com:8000"}, nil, "use an IP address"},
		{"bad port", []string{"--demo", "--http", "127.0.0.1:http"}, nil, "port must be a number"},
		{"port out of range", []string{"--demo", "--http", "127.0.0.1:99999"}, nil, "port must be at most 65535"},
		{"auth server without token", []string{"--demo", "--http", "8000", "--auth-server", "https://as.example.com"}, nil, "needs MCP_AUTH_TOKEN"},
		{"auth server", []string{"--demo", "--http", "8000", "--auth-server", "https://as.example.com"}, map[string]string{"MCP_AUTH_TOKEN": httpToken}, ""},
		{"auth server not URL", []string{"--demo", "--http", "8000", "--auth-server", "as.example.com"}, nil, "absolute http(s) URL"},
		{"public url without auth server", []string{"--demo", "--http", "8000", "--public-url", "https://mcp.example.com/mcp"}, nil, "only used with"},
		{"session timeout", []string{"--demo", "--http", "8000", "--session-timeout", "10"}, nil, "duration with a unit"},
		{"stateless strict bool", []string{"--demo", "--http", "8000"}, map[string]string{"MCP_STATELESS": "yes"}, "must be one of"},
		{"http ignored by tools", []string{"--demo", "tools"}, map[string]string{"MCP_HTTP_ADDR": "0.0.0.0:8000"}, ""},
		{"sse on loopback", []string{"--demo", "--transport", "sse"}, nil, ""},
		{"sse all interfaces without token", []string{"--demo"}, map[string]string{"MCP_TRANSPORT": "sse", "MCP_HOST": "0.0.0.0"}, "is not a loopback address"},
		{"sse real cluster without token", []string{"--transport", "sse"}, real, "needs MCP_AUTH_TOKEN"},
		{"sse stateless", []string{"--demo", "--transport", "sse", "--stateless"}, nil, "does not apply to MCP_TRANSPORT=sse"},
		{"max sessions not a number", []string{"--demo", "--http", "8000", "--max-sessions", "many"}, nil, "must be a whole number"},
		{"max in flight negative", []string{"--demo", "--http", "8000"}, map[string]string{"MCP_MAX_IN_FLIGHT": "-1"}, "must be a whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.args, tc.env, tc.want, httpToken, httpCanary) })
	}
}

// TestHTTPLimitSettings: 0 means "no limit" for the operator (mcphttp
// spells that as negative; its zero is the default), unset keeps the
// default.
func TestHTTPLimitSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env                []string
		sessions, inFlight int
	}{
		{nil, 0, 0},
		{[]string{"MCP_MAX_SESSIONS", "0", "MCP_MAX_IN_FLIGHT", "0"}, -1, -1},
		{[]string{"MCP_MAX_SESSIONS", "5", "MCP_MAX_IN_FLIGHT", "7"}, 5, 7},
	} {
		c, err := Parse([]string{"--demo", "--http", "8000"}, env(tc.env...))
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTP.MaxSessions != tc.sessions || c.HTTP.MaxInFlight != tc.inFlight {
			t.Errorf("%q: sessions %d in flight %d, want %d %d", tc.env, c.HTTP.MaxSessions, c.HTTP.MaxInFlight, tc.sessions, tc.inFlight)
		}
	}
}

// TestImageAddrIsOverridden: an image's MCP_IMAGE_HTTP_ADDR is the lowest
// default. A deployment switching images keeps its own MCP_TRANSPORT,
// MCP_HOST, MCP_PORT or MCP_HTTP_ADDR and gets what they say, never a
// conflict with the image: a deployment switches by changing the image only.
func TestImageAddrIsOverridden(t *testing.T) {
	t.Parallel()
	const image = "MCP_IMAGE_HTTP_ADDR"
	tests := []struct {
		name          string
		env           []string
		transport     string
		addr          string // "" for stdio
		wantErrSubstr string
	}{
		{"image default alone", []string{image, "0.0.0.0:8000"}, TransportStreamable, "0.0.0.0:8000", ""},
		{"deployment's port", []string{image, "0.0.0.0:8000", "MCP_PORT", "3000"}, TransportStreamable, "0.0.0.0:3000", ""},
		{"deployment's host", []string{image, "0.0.0.0:8000", "MCP_HOST", "127.0.0.1"}, TransportStreamable, "127.0.0.1:8000", ""},
		{"deployment's sse", []string{image, "0.0.0.0:8000", "MCP_TRANSPORT", "sse"}, TransportSSE, "0.0.0.0:8000", ""},
		{"deployment's own address", []string{image, "0.0.0.0:8000", "MCP_HTTP_ADDR", "0.0.0.0:9000"}, TransportStreamable, "0.0.0.0:9000", ""},
		{"deployment asks for stdio", []string{image, "0.0.0.0:8000", "MCP_TRANSPORT", "stdio"}, TransportStdio, "", ""},
		{"bad image address", []string{image, "0.0.0.0:http"}, "", "", "MCP_IMAGE_HTTP_ADDR: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kv := append([]string{"MCP_AUTH_TOKEN", strings.Repeat("t", 40)}, tc.env...)
			c, err := Parse([]string{"--demo"}, env(kv...))
			if tc.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if c.HTTP.Transport != tc.transport {
				t.Errorf("transport = %q, want %q", c.HTTP.Transport, tc.transport)
			}
			if tc.transport != TransportStdio && c.HTTP.Addr != tc.addr {
				t.Errorf("address = %q, want %q", c.HTTP.Addr, tc.addr)
			}
		})
	}
}

// checkParse parses args under env (a name it lacks is unset) and checks
// the outcome: no error when want is "", else an error containing want;
// and that no error shows any of secrets.
func checkParse(t *testing.T, args []string, env map[string]string, want string, secrets ...string) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	_, err := Parse(args, lookup)
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want it to contain %q", err, want)
	}
	if err != nil {
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("the error shows a secret: %v", err)
			}
		}
	}
}
