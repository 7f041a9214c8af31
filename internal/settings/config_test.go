package settings

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// env, base and with are the shared configuration-test environment
// (internal/testutil) under short names: a lookup over pairs, so no test
// touches os.Environ; a complete, valid read-only environment; and that
// environment with some pairs set over it.
var (
	env  = testutil.LookupEnv
	base = testutil.ReadOnlyEnv()
	with = testutil.ReadOnlyEnv
)

func writeSecret(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask-proof
		t.Fatal(err)
	}
	return p
}

func TestParseConfigOK(t *testing.T) {
	t.Parallel()
	secretFile := writeSecret(t, "s3cr3t-from-file\n", 0o600)
	crlfFile := writeSecret(t, "s3cr3t-crlf\r\n", 0o600)
	loose := writeSecret(t, "s3cr3t-loose", 0o644)
	tests := []struct {
		name  string
		args  []string
		env   []string
		check func(t *testing.T, c *Config)
	}{
		{"defaults", nil, base, func(t *testing.T, c *Config) {
			if c.Command != CmdServe || c.Profile != "safe" || !c.ReadOnly || c.LogLevel != slog.LevelInfo {
				t.Errorf("got command %q profile %q readOnly %t level %v", c.Command, c.Profile, c.ReadOnly, c.LogLevel)
			}
			if c.TokenSecret.Reveal() != "11111111-2222-4333-8444-555555555555" || c.SecretFrom != "PVE_API_TOKEN_SECRET" {
				t.Errorf("secret not read from env (from %q)", c.SecretFrom)
			}
		}},
		{"flag overrides env", []string{"--url", "https://other:8006", "--read-only=false", "--audit-log", "/tmp/a.jsonl"}, base, func(t *testing.T, c *Config) {
			if c.URL != "https://other:8006" || c.ReadOnly {
				t.Errorf("URL %q readOnly %t", c.URL, c.ReadOnly)
			}
		}},
		{"flag overrides invalid env", []string{"--read-only"}, with("PROXMOX_SAFE_READ_ONLY", "yes"), func(t *testing.T, c *Config) {
			if !c.ReadOnly {
				t.Error("read-only not set")
			}
		}},
		{"bool 1 and 0", nil, with("PROXMOX_SAFE_READ_ONLY", "0", "PVE_TLS_INSECURE", "1", "PROXMOX_SAFE_AUDIT_LOG", "/tmp/x"), func(t *testing.T, c *Config) {
			if c.ReadOnly || !c.TLSInsecure {
				t.Errorf("readOnly %t insecure %t", c.ReadOnly, c.TLSInsecure)
			}
		}},
		{"empty env is unset", nil, with("PROXMOX_SAFE_PROFILE", "", "PVE_TLS_INSECURE", ""), func(t *testing.T, c *Config) {
			if c.Profile != "safe" || c.TLSInsecure {
				t.Errorf("profile %q insecure %t", c.Profile, c.TLSInsecure)
			}
		}},
		{"allowed nodes list", nil, with("PVE_ALLOWED_NODES", " pve1, pve-2 ,,"), func(t *testing.T, c *Config) {
			if !slices.Equal(c.AllowedNodes, []string{"pve1", "pve-2"}) {
				t.Errorf("nodes %q", c.AllowedNodes)
			}
		}},
		{"readonly profile needs no audit log", nil, with("PROXMOX_SAFE_READ_ONLY", "false", "PROXMOX_SAFE_PROFILE", "readonly"), func(t *testing.T, c *Config) {
			if c.Mutating() {
				t.Error("readonly profile is mutating")
			}
		}},
		{"tools needs no audit log", []string{"tools"}, with("PROXMOX_SAFE_READ_ONLY", "false"), func(t *testing.T, c *Config) {
			if c.Command != CmdTools || c.LogLevel != slog.LevelError {
				t.Errorf("command %q level %v", c.Command, c.LogLevel)
			}
		}},
		{"secret file, one newline trimmed", []string{"--token-secret-file", secretFile}, with("PVE_API_TOKEN_SECRET", ""), func(t *testing.T, c *Config) {
			if c.TokenSecret.Reveal() != "s3cr3t-from-file" || len(c.Warnings) != 0 {
				t.Errorf("secret %q Warnings %q", c.TokenSecret.Reveal(), c.Warnings)
			}
		}},
		{"secret file flag beats secret env", []string{"--token-secret-file", crlfFile}, base, func(t *testing.T, c *Config) {
			if c.TokenSecret.Reveal() != "s3cr3t-crlf" || c.SecretFrom != "PVE_API_TOKEN_SECRET_FILE" {
				t.Errorf("secret %q from %q", c.TokenSecret.Reveal(), c.SecretFrom)
			}
		}},
		{"loose secret file warns", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", loose), func(t *testing.T, c *Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "0644") {
				t.Errorf("Warnings %q", c.Warnings)
			}
		}},
		// systemd's LoadCredential= files are 0440 in a directory only the
		// service can enter: no warning for them, still one for a loose
		// file elsewhere, even next to it by name ("<dir>-other").
		{"loose audit key warns", nil, with("PROXMOX_SAFE_READ_ONLY", "false", "PROXMOX_SAFE_AUDIT_LOG", filepath.Join(filepath.Dir(loose), "audit.jsonl"), "PROXMOX_SAFE_AUDIT_KEY_FILE", loose), func(t *testing.T, c *Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], loose) || !strings.Contains(c.Warnings[0], "0644") {
				t.Errorf("Warnings %q", c.Warnings)
			}
		}},
		{"credential file does not warn", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", loose, "CREDENTIALS_DIRECTORY", filepath.Dir(loose)), func(t *testing.T, c *Config) {
			if len(c.Warnings) != 0 {
				t.Errorf("Warnings %q", c.Warnings)
			}
		}},
		{"loose file outside the credentials directory warns", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", loose, "CREDENTIALS_DIRECTORY", filepath.Dir(loose)[:len(filepath.Dir(loose))-1]), func(t *testing.T, c *Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "0644") {
				t.Errorf("Warnings %q", c.Warnings)
			}
		}},
		{"demo ignores PVE env", []string{"--demo"}, []string{"PVE_URL", "http://bad", "PVE_TLS_INSECURE", "maybe"}, func(t *testing.T, c *Config) {
			if !c.Demo || c.URL != "" || c.TLSInsecure {
				t.Errorf("demo %t url %q", c.Demo, c.URL)
			}
		}},
		{"demo honours profile", []string{"--demo", "--read-only"}, []string{"PROXMOX_SAFE_PROFILE", "readonly"}, func(t *testing.T, c *Config) {
			if c.Profile != "readonly" || !c.ReadOnly {
				t.Errorf("profile %q readOnly %t", c.Profile, c.ReadOnly)
			}
		}},
		{"call with args, flags after command", []string{"call", "node_status", `{"node":"pve1"}`, "--demo"}, nil, func(t *testing.T, c *Config) {
			if c.Command != CmdCall || c.Tool != "node_status" || c.ToolArgs != `{"node":"pve1"}` || !c.Demo {
				t.Errorf("%+v", c)
			}
		}},
		{"call default args", []string{"--demo", "call", "list_guests"}, nil, func(t *testing.T, c *Config) {
			if c.ToolArgs != "{}" {
				t.Errorf("args %q", c.ToolArgs)
			}
		}},
		{"double dash ends flags", []string{"--demo", "call", "--", "x", "--y"}, nil, func(t *testing.T, c *Config) {
			if c.Tool != "x" || c.ToolArgs != "--y" {
				t.Errorf("tool %q args %q", c.Tool, c.ToolArgs)
			}
		}},
		{"log level", []string{"--log-level", "debug", "call", "x"}, base, func(t *testing.T, c *Config) {
			if c.LogLevel != slog.LevelDebug {
				t.Errorf("level %v", c.LogLevel)
			}
		}},
		{"version skips checks", []string{"--version"}, nil, func(t *testing.T, c *Config) {
			if !c.Version {
				t.Error("version not set")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(tt.args, env(tt.env...))
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	empty := writeSecret(t, "\n", 0o600)
	twoLines := writeSecret(t, "abc\n\n", 0o600)
	big := writeSecret(t, strings.Repeat("x", maxSecretFileBytes+1), 0o600)
	dir := t.TempDir()
	const canary = "CANARY-SECRET-do-not-print"
	tests := []struct {
		name string
		args []string
		env  []string
		want string // substring of the one-line error
	}{
		{"no url", nil, with("PVE_URL", ""), "PVE_URL (--url) is required"},
		{"no token id", nil, with("PVE_API_TOKEN_ID", ""), "PVE_API_TOKEN_ID (--token-id) is required"},
		{"no secret", nil, with("PVE_API_TOKEN_SECRET", ""), "PVE_API_TOKEN_SECRET or PVE_API_TOKEN_SECRET_FILE"},
		{"both secrets", nil, with("PVE_API_TOKEN_SECRET_FILE", "/x"), "set only one of PVE_API_TOKEN_SECRET and PVE_API_TOKEN_SECRET_FILE"},
		{"secret with space", nil, with("PVE_API_TOKEN_SECRET", canary+" x"), "PVE_API_TOKEN_SECRET: the token secret contains white space"},
		{"missing secret file", []string{"--token-secret-file", filepath.Join(dir, "nope")}, with("PVE_API_TOKEN_SECRET", ""), "PVE_API_TOKEN_SECRET_FILE (--token-secret-file): "},
		{"secret file is a dir", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", dir), "is not a regular file"},
		{"empty secret file", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", empty), "is empty"},
		{"two newlines", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", twoLines), "PVE_API_TOKEN_SECRET_FILE: the token secret contains white space"},
		{"huge secret file", nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", big), "larger than 4096 bytes"},
		{"bad bool env", nil, with("PROXMOX_SAFE_READ_ONLY", "yes"), `PROXMOX_SAFE_READ_ONLY (--read-only): must be one of true, false, 1, 0 (got "yes")`},
		{"bool TRUE is not accepted", nil, with("PVE_TLS_INSECURE", "TRUE"), "PVE_TLS_INSECURE (--tls-insecure): must be one of"},
		{"bad bool flag", []string{"--read-only=t"}, base, `--read-only (PROXMOX_SAFE_READ_ONLY): must be one of true, false, 1, 0 (got "t")`},
		{"bad profile", nil, with("PROXMOX_SAFE_PROFILE", "root"), `PROXMOX_SAFE_PROFILE (--profile): unknown profile "root"`},
		{"bad node flag with colon", []string{"--allowed-nodes", "pve1,a: b"}, base, `--allowed-nodes (PVE_ALLOWED_NODES): "a: b" is not a valid Proxmox node name`},
		{"bad node", nil, with("PVE_ALLOWED_NODES", "pve1,pve 2"), `PVE_ALLOWED_NODES (--allowed-nodes): "pve 2" is not a valid Proxmox node name`},
		{"bad log level", []string{"--log-level=loud"}, base, "--log-level (PROXMOX_SAFE_LOG_LEVEL): must be one of"},
		{"audit log required", nil, with("PROXMOX_SAFE_READ_ONLY", "false"), `PROXMOX_SAFE_AUDIT_LOG (--audit-log) is required when the "safe" profile enables mutations`},
		{"audit log required for call", []string{"call", "list_guests"}, with("PROXMOX_SAFE_READ_ONLY", ""), "PROXMOX_SAFE_AUDIT_LOG (--audit-log) is required"},
		{"insecure with pin", nil, with("PVE_TLS_INSECURE", "true", "PVE_TLS_FINGERPRINT", "AA:BB"), "PVE_TLS_INSECURE (--tls-insecure) cannot be combined"},
		{"unknown flag", []string{"--token-secret", canary}, base, "unknown flag --token-secret"},
		{"unknown command", []string{"start"}, base, `unknown command "start"`},
		{"call without tool", []string{"call"}, base, "call needs a tool name"},
		{"call too many", []string{"call", "a", "{}", "x"}, base, "at most one JSON argument"},
		{"tools with args", []string{"tools", "x", "y"}, base, "tools takes at most one tool name"},
		{"pve flag with demo", []string{"--demo", "--url", "https://x"}, nil, "--url (PVE_URL) cannot be combined with --demo"},
		{"flag needs value", []string{"--url"}, base, "flag --url needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.args, env(tt.env...))
			if err == nil {
				t.Fatalf("want error containing %q, got nil", tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q\nwant it to contain %q", msg, tt.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if strings.Contains(msg, canary) {
				t.Errorf("error leaks the secret: %q", msg)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		_, err := Parse(args, env())
		if err != ErrHelp {
			t.Errorf("%q: err %v, want ErrHelp", args, err)
		}
	}
	var b strings.Builder
	Usage(&b)
	for _, s := range table {
		if s.flag != "" && !strings.Contains(b.String(), "--"+s.flag) {
			t.Errorf("--help misses --%s", s.flag)
		}
		if s.env != "" && !strings.Contains(b.String(), s.env) {
			t.Errorf("--help misses %s", s.env)
		}
	}
}

// TestSecretNeverFormats guards the secret type against accidental printing.
func TestSecretNeverFormats(t *testing.T) {
	t.Parallel()
	s := Secret{"CANARY"}
	c := Config{TokenSecret: s}
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s),
		fmt.Sprintf("%v %+v", c, c), fmt.Sprintf("%#v", c),
	} {
		if strings.Contains(out, "CANARY") || strings.Contains(out, "43414e415259") {
			t.Errorf("secret printed: %s", out)
		}
	}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "secret", s)
	if strings.Contains(b.String(), "CANARY") {
		t.Errorf("secret logged: %s", b.String())
	}
}

// TestConfigMessages: the messages a new user meets name the setting to
// change and the rule that was broken, and never repeat a secret.
func TestConfigMessages(t *testing.T) {
	t.Parallel()
	const canary = "5ec1e7aa-0000-4000-8000-c0ffee000001"
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"pasted header", with("PVE_API_TOKEN_ID", "PVEAPIToken=mcp@pve!agent="+canary), nil,
			[]string{"PVE_API_TOKEN_ID", "value not shown", "PVE_API_TOKEN_ID=mcp@pve!agent,", "PVE_API_TOKEN_SECRET"}},
		{"pasted id=secret", with("PVE_API_TOKEN_ID", "mcp@pve!agent="+canary), nil,
			[]string{"PVE_API_TOKEN_ID", "value not shown", "Split it"}},
		{"token name too short", with("PVE_API_TOKEN_ID", "a@pve!b"), nil,
			[]string{`the token name "b"`, "2 characters or more"}},
		{"realm too short", with("PVE_API_TOKEN_ID", "a@p!mcp"), nil,
			[]string{`the realm "p"`, "2 characters or more"}},
		{"no realm", with("PVE_API_TOKEN_ID", "automation!mcp"), nil,
			[]string{"USER@REALM!TOKENNAME", "no '@'"}},
		{"plain http", with("PVE_URL", "http://pve.example.com:8006"), nil,
			[]string{"PVE_URL", "PVE_ALLOW_INSECURE_HTTP=true"}},
		{"unknown command", base, []string{"frobnicate"},
			[]string{"healthcheck", "doctor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.args, env(tc.env...))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, canary) || strings.Contains(msg, "AllowInsecureHTTP") {
				t.Errorf("message leaks the secret or a Go field name: %q", msg)
			}
		})
	}
	// The library's own check (reached by a library user) must not echo
	// the secret either, nor name a Go field to a binary user.
	if _, err := Parse(nil, env(with("PVE_URL", "http://pve:8006", "PVE_ALLOW_INSECURE_HTTP", "1")...)); err != nil {
		t.Errorf("PVE_ALLOW_INSECURE_HTTP=1 still refused: %v", err)
	}
}
