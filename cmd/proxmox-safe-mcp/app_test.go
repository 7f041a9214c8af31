package main

import (
	"slices"
	"strings"
	"testing"
)

// env builds a lookup function from pairs, so no test touches os.Environ.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// base is a complete, valid read-only environment.
var base = []string{
	"PVE_URL", "https://pve.example.com:8006",
	"PVE_API_TOKEN_ID", "automation@pve!mcp",
	"PVE_API_TOKEN_SECRET", "11111111-2222-4333-8444-555555555555",
	"PROXMOX_SAFE_READ_ONLY", "true",
}

func with(kv ...string) []string {
	out := slices.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		if j := slices.Index(out, kv[i]); j >= 0 && j%2 == 0 {
			out[j+1] = kv[i+1]
		} else {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}

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
