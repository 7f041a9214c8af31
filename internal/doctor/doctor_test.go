package doctor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	testToken  = "automation@pve!doctor"
	testSecret = "d0c70000-0000-4000-8000-000000000000"
)

// setupFor builds what the binary hands to Run: a read-only configuration
// for pve1, a client pinned to srv's certificate.
func setupFor(t *testing.T, srv *proxmoxtest.Server, args ...string) Setup {
	t.Helper()
	env := map[string]string{"PVE_URL": srv.URL, "PVE_API_TOKEN_ID": testToken, "PVE_API_TOKEN_SECRET": testSecret,
		"PVE_TLS_FINGERPRINT": srv.Fingerprint(), "PVE_ALLOWED_NODES": "pve1", "PROXMOX_SAFE_READ_ONLY": "true"}
	cfg, err := settings.Parse(append(args, "doctor"), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	client, err := proxmoxsafe.New(proxmoxsafe.Config{URL: cfg.URL, TokenID: cfg.TokenID, TokenSecret: cfg.TokenSecret.Reveal(),
		Fingerprint: cfg.Fingerprint, Policy: proxmoxsafe.Policy{AllowedNodes: cfg.AllowedNodes, ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	return Setup{Client: client, Options: &mcpserver.Options{ReadOnly: true}, Trust: Trust{Pin: cfg.Fingerprint},
		Config: cfg, Version: "v-test", AuditKey: func(string) ([]byte, error) { return nil, nil }}
}

func server(t *testing.T, privs map[string][]string) *proxmoxtest.Server {
	t.Helper()
	c := proxmoxtest.DemoCluster()
	c.Tokens = map[string]*proxmoxtest.Token{testToken: {Secret: testSecret, Privileges: privs}}
	srv := proxmoxtest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv
}

// TestRunReportsEachStep: a working read-only setup passes every step in
// order, with the pinned certificate's fingerprint, and exits 0.
func TestRunReportsEachStep(t *testing.T) {
	t.Parallel()
	srv := server(t, map[string][]string{"/": {"Sys.Audit", "VM.Audit", "Datastore.Audit"}})
	var b strings.Builder
	code := Run(t.Context(), setupFor(t, srv), &b)
	out := b.String()
	last := 0
	for _, want := range []string{"proxmox-safe-mcp doctor (v-test)", tagged("[ok]", "configuration:"), tagged("[info]", "policy: read-only"),
		tagged("[ok]", "reachable:"), tagged("[ok]", "TLS: trusted by the pinned fingerprint"), tagged("[ok]", "token: accepted"), tagged("[ok]", "node pve1: member, online"),
		"Result: "} {
		i := strings.Index(out[last:], want)
		if i < 0 {
			t.Fatalf("report lacks %q after position %d:\n%s", want, last, out)
		}
		last += i
	}
	if code != 0 && code != ExitDangerous {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestRunJSON: --json prints one document whose exit code is Run's.
func TestRunJSON(t *testing.T) {
	t.Parallel()
	srv := server(t, map[string][]string{"/": {"Sys.Audit"}}) // too few: some privileges missing
	var b strings.Builder
	code := Run(t.Context(), setupFor(t, srv, "--json"), &b)
	var got struct {
		Version  string `json:"version"`
		Problems int    `json:"problems"`
		ExitCode int    `json:"exit_code"`
		Checks   []struct{ Status, Message string }
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if got.ExitCode != code || code != ExitProblems || got.Problems == 0 || got.Version != "v-test" || len(got.Checks) == 0 {
		t.Errorf("exit %d, document %+v", code, got)
	}
}

// TestRunStopsBeforeAnUntrustedServer: a wrong pin fails at TLS, shows the
// real fingerprint and how to pin it, and never gets to the token.
func TestRunStopsBeforeAnUntrustedServer(t *testing.T) {
	t.Parallel()
	srv := server(t, nil)
	s := setupFor(t, srv)
	s.Trust.Pin = strings.Repeat("AB:", 31) + "AB"
	var b strings.Builder
	if code := Run(t.Context(), s, &b); code != ExitProblems {
		t.Errorf("exit %d", code)
	}
	out := b.String()
	if !strings.Contains(out, tagged("[FAIL]", "TLS: NOT trusted")) || !strings.Contains(out, "PVE_TLS_FINGERPRINT="+srv.Fingerprint()) || strings.Contains(out, "token:") {
		t.Errorf("report:\n%s", out)
	}
}

// tagged is a report line as the text report prints it.
func tagged(tag, msg string) string { return fmt.Sprintf("%-6s %s", tag, msg) }

func TestFingerprint(t *testing.T) {
	t.Parallel()
	if got := fingerprint([]byte{0xab, 0x01, 0xff}); got != "AB:01:FF" {
		t.Errorf("fingerprint = %q", got)
	}
}
