package settings

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// effective is what a configuration means, without the record of which
// names supplied it: two spellings of one setting must give equal values.
func effective(c *Config) Config {
	e := *c
	e.setFrom = nil
	e.Warnings = nil
	e.HTTP.host, e.HTTP.port, e.HTTP.Addr = "", "", ""
	return e
}

// aliasCases lists, for every alias in the settings table, a value under
// the alias and the same meaning under our own name(s). TestAliasesCovered
// fails when an alias is added to the table without a row here.
var aliasCases = []struct {
	alias  string // the alias under test (for the coverage check)
	args   []string
	env    []string // the alias form, added to base
	own    []string // the same meaning in our own names, added to base
	differ []string // a conflicting own value, set together with env; nil: none exists
}{
	{"PVE_BASE_URL", nil,
		[]string{"PVE_BASE_URL", "https://pve2.example.com:8006"},
		[]string{"PVE_URL", "https://pve2.example.com:8006"},
		[]string{"PVE_URL", "https://pve3.example.com:8006"}},
	{"PVE_VERIFY_SSL", nil,
		[]string{"PVE_VERIFY_SSL", "false"},
		[]string{"PVE_TLS_INSECURE", "true"},
		[]string{"PVE_TLS_INSECURE", "false"}},
	{"PVE_VERIFY_SSL", nil, // Python spelling
		[]string{"PVE_VERIFY_SSL", "False"},
		[]string{"PVE_TLS_INSECURE", "1"},
		[]string{"PVE_TLS_INSECURE", "0"}},
	{"PVE_VERIFY_SSL", nil,
		[]string{"PVE_VERIFY_SSL", "true"},
		[]string{"PVE_TLS_INSECURE", "false"},
		[]string{"PVE_TLS_INSECURE", "true"}},
	{"MCP_PATH", []string{"--demo"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:8000", "MCP_PATH", "/x/mcp"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:8000", "MCP_HTTP_PATH", "/x/mcp"},
		[]string{"MCP_HTTP_PATH", "/y/mcp"}},
	{"MCP_TRANSPORT", []string{"--demo"},
		[]string{"MCP_TRANSPORT", "streamable-http"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:8000"},
		nil}, // streamable-http with any address is consistent
	{"MCP_TRANSPORT", []string{"--demo"},
		[]string{"MCP_TRANSPORT", "stdio"},
		nil,
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:8000"}},
	{"MCP_HOST", []string{"--demo"},
		[]string{"MCP_TRANSPORT", "streamable-http", "MCP_HOST", "::1"},
		[]string{"MCP_HTTP_ADDR", "[::1]:8000"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:8000"}},
	{"MCP_PORT", []string{"--demo"},
		[]string{"MCP_TRANSPORT", "http", "MCP_PORT", "9123"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:9123"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.1:9124"}},
	{"MCP_PORT", []string{"--demo"},
		[]string{"MCP_TRANSPORT", "streamable-http", "MCP_HOST", "localhost", "MCP_PORT", "9123"},
		[]string{"MCP_TRANSPORT", "streamable-http", "MCP_HTTP_ADDR", "127.0.0.1:9123"},
		[]string{"MCP_HTTP_ADDR", "127.0.0.2:9123"}},
	// The responder's MCP_PROXMOX_* names, which its existing deployments use.
	{"MCP_PROXMOX_PROFILE", nil,
		[]string{"MCP_PROXMOX_PROFILE", "claptrap"},
		[]string{"PROXMOX_SAFE_PROFILE", "claptrap"},
		[]string{"PROXMOX_SAFE_PROFILE", "safe"}},
	{"MCP_PROXMOX_AUDIT_LOG", nil,
		[]string{"MCP_PROXMOX_AUDIT_LOG", "/var/log/a.jsonl"},
		[]string{"PROXMOX_SAFE_AUDIT_LOG", "/var/log/a.jsonl"},
		[]string{"PROXMOX_SAFE_AUDIT_LOG", "/var/log/b.jsonl"}},
	{"MCP_PROXMOX_PROTECTED", nil,
		[]string{"MCP_PROXMOX_PROTECTED", "101,db,tag:critical,pool:prod"},
		[]string{"PROXMOX_SAFE_PROTECTED", "101,db,tag:critical,pool:prod"},
		[]string{"PROXMOX_SAFE_PROTECTED", "102"}},
	{"MCP_PROXMOX_MIN_UPTIME", nil,
		[]string{"MCP_PROXMOX_MIN_UPTIME", "90m"},
		[]string{"PROXMOX_SAFE_MIN_UPTIME", "90m"},
		[]string{"PROXMOX_SAFE_MIN_UPTIME", "2h"}},
	{"MCP_PROXMOX_SNAPSHOT_MAX_AGE", nil,
		[]string{"MCP_PROXMOX_SNAPSHOT_MAX_AGE", "48h"},
		[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_AGE", "48h"},
		[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_AGE", "24h"}},
	{"MCP_PROXMOX_SNAPSHOT_MAX_COUNT", nil,
		[]string{"MCP_PROXMOX_SNAPSHOT_MAX_COUNT", "10"},
		[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_COUNT", "10"},
		[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_COUNT", "6"}},
	{"MCP_PROXMOX_AUTOSNAP_MARKER", nil,
		[]string{"MCP_PROXMOX_AUTOSNAP_MARKER", "nightly"},
		[]string{"PROXMOX_SAFE_AUTOSNAP_MARKER", "nightly"},
		[]string{"PROXMOX_SAFE_AUTOSNAP_MARKER", "cv4pve-autosnap"}},
}

// TestAliasesEquivalent: every alias is accepted and means exactly what our
// own name means; setting both to the same value is fine; to different
// values is a startup error naming both.
func TestAliasesEquivalent(t *testing.T) {
	t.Parallel()
	for _, tc := range aliasCases {
		t.Run(strings.Join(tc.env, "="), func(t *testing.T) {
			t.Parallel()
			envBase := base
			if slices.Contains(tc.args, "--demo") {
				envBase = nil
			}
			if tc.alias == "PVE_BASE_URL" { // base sets PVE_URL
				envBase = slices.Clone(base)
				envBase[slices.Index(envBase, "PVE_URL")+1] = ""
			}
			plus := func(kv ...[]string) []string {
				out := slices.Clone(envBase)
				for _, x := range kv {
					out = append(out, x...)
				}
				return out
			}
			viaAlias, err := Parse(tc.args, env(plus(tc.env)...))
			if err != nil {
				t.Fatalf("alias form refused: %v", err)
			}
			viaOwn, err := Parse(tc.args, env(plus(tc.own)...))
			if err != nil {
				t.Fatalf("own form refused: %v", err)
			}
			if a, o := effective(viaAlias), effective(viaOwn); !reflect.DeepEqual(a, o) {
				t.Errorf("alias and own name differ:\nalias %+v\nown   %+v", a, o)
			}
			both, err := Parse(tc.args, env(plus(tc.env, tc.own)...))
			if err != nil {
				t.Fatalf("alias and own name with the same value refused: %v", err)
			}
			if a, b := effective(viaAlias), effective(both); !reflect.DeepEqual(a, b) {
				t.Errorf("both set (same value) differs from alias alone:\n%+v\n%+v", a, b)
			}
			if tc.differ == nil {
				return
			}
			_, err = Parse(tc.args, env(plus(tc.env, tc.differ)...))
			if err == nil {
				t.Fatalf("conflicting values accepted: %q with %q", tc.env, tc.differ)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.alias) || !strings.Contains(msg, tc.differ[0]) {
				t.Errorf("conflict error does not name %s and %s: %v", tc.alias, tc.differ[0], err)
			}
		})
	}
}

// TestAliasesCovered keeps aliasCases complete: an alias added to the
// settings table needs its equivalence row.
func TestAliasesCovered(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, tc := range aliasCases {
		covered[tc.alias] = true
	}
	for _, s := range table {
		for _, a := range s.aliases {
			if !covered[a.env] {
				t.Errorf("alias %s of %s has no row in aliasCases", a.env, s.env)
			}
		}
	}
}

// TestAliasErrors: bad values under an alias name the alias; the safety
// rules hold whatever the names.
func TestAliasErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"bad verify value", nil, with("PVE_VERIFY_SSL", "no"), "PVE_VERIFY_SSL (alias of PVE_TLS_INSECURE): must be one of true, false, 1, 0"},
		{"verify off with a pin", nil, with("PVE_VERIFY_SSL", "false", "PVE_TLS_FINGERPRINT", strings.Repeat("ab:", 31)+"ab"), "cannot be combined with PVE_TLS_FINGERPRINT"},
		{"unknown transport", []string{"--demo"}, []string{"MCP_TRANSPORT", "websocket"}, "MCP_TRANSPORT (--transport): must be"},
		{"stdio with an address", []string{"--demo"}, []string{"MCP_TRANSPORT", "stdio", "MCP_PORT", "8000"}, "MCP_TRANSPORT (--transport) is stdio"},
		{"host without transport", []string{"--demo"}, []string{"MCP_HOST", "127.0.0.1"}, "MCP_HOST/MCP_PORT are set but the transport is stdio"},
		{"bad port", []string{"--demo"}, []string{"MCP_TRANSPORT", "http", "MCP_PORT", "http"}, "MCP_PORT: must be a port number"},
		{"host name", []string{"--demo"}, []string{"MCP_TRANSPORT", "http", "MCP_HOST", "example.com"}, "MCP_HOST/MCP_PORT: "},
		{"non-loopback without a token", nil, with("MCP_TRANSPORT", "streamable-http", "MCP_HOST", "0.0.0.0"), "is not a loopback address and no MCP_AUTH_TOKEN"},
		{"real cluster over HTTP needs a token", nil, with("MCP_TRANSPORT", "streamable-http"), "needs MCP_AUTH_TOKEN"},
		{"bad path", []string{"--demo"}, []string{"MCP_TRANSPORT", "http", "MCP_PATH", "/mcp", "MCP_HTTP_PATH", "/other"}, "MCP_HTTP_PATH and MCP_PATH are the same setting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.args, env(tc.env...))
			if err == nil {
				t.Fatalf("accepted %q", tc.env)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestAliasSource: a warning or message can name the alias the user wrote.
func TestAliasSource(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(with("PVE_VERIFY_SSL", "false")...))
	if err != nil {
		t.Fatal(err)
	}
	if !c.TLSInsecure || c.Source("PVE_TLS_INSECURE") != "PVE_VERIFY_SSL" {
		t.Errorf("insecure %t, source %q", c.TLSInsecure, c.Source("PVE_TLS_INSECURE"))
	}
	c, err = Parse(nil, env(with("PVE_TLS_INSECURE", "true", "PVE_VERIFY_SSL", "false")...))
	if err != nil {
		t.Fatal(err)
	}
	if c.Source("PVE_TLS_INSECURE") != "PVE_TLS_INSECURE" {
		t.Errorf("own name set too, source %q", c.Source("PVE_TLS_INSECURE"))
	}
}
