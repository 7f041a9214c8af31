package settings

import (
	"strings"
	"testing"
)

// TestCheckTokenID: a malformed token id is named with what breaks
// Proxmox's rules; a pasted header is recognised and its secret never shown.
func TestCheckTokenID(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-0000"
	for _, tc := range []struct{ id, want string }{
		{"automation@pve!mcp", ""},
		{"automation@pve", "no '!' before the token name"},
		{"automation!mcp", "no '@' between user and realm"},
		{"a@p!mcp", `the realm "p"`},
		{"a@pve!m", `the token name "m"`},
		{"PVEAPIToken=automation@pve!mcp=" + canary, "PVE_API_TOKEN_ID=automation@pve!mcp,"},
		{"automation@pve!mcp=" + canary, "secret included (value not shown)"},
	} {
		err := checkTokenID(tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.id, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: err = %v, want %q", tc.id, err, tc.want)
		case err != nil && strings.Contains(err.Error(), canary):
			t.Errorf("%q: the secret is shown: %v", tc.id, err)
		}
	}
}
