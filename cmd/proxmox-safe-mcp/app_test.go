package main

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// env and with are the shared configuration-test environment
// (internal/testutil) under short names: a lookup over pairs, so no test
// touches os.Environ, and a complete, valid read-only environment with
// some pairs set over it.
var (
	env  = testutil.LookupEnv
	with = testutil.ReadOnlyEnv
)

// TestVerifySSLAliasWarns: PVE_VERIFY_SSL=false gets the same loud warning
// as PVE_TLS_INSECURE, naming the alias and suggesting the pin instead.
func TestVerifySSLAliasWarns(t *testing.T) {
	t.Parallel()
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"tools"}, env(with("PVE_VERIFY_SSL", "false")...), strings.NewReader(""), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"level=WARN", "PVE_VERIFY_SSL", "NOT verified", "PVE_TLS_FINGERPRINT"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr misses %q:\n%s", want, stderr.String())
		}
	}
}
