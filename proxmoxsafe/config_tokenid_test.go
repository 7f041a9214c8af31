package proxmoxsafe_test

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestTokenIDPastedHeaderNotEchoed: the value Proxmox shows for a new token
// ("PVEAPIToken=user@realm!name=SECRET") pasted as TokenID must not have
// its secret repeated in the error.
func TestTokenIDPastedHeaderNotEchoed(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"PVEAPIToken=mcp@pve!agent=" + canary, "mcp@pve!agent=" + canary} {
		cfg := baseConfig()
		cfg.TokenID = id
		_, err := proxmoxsafe.New(cfg)
		if err == nil || strings.Contains(err.Error(), canary) || !strings.Contains(err.Error(), "TokenSecret") {
			t.Errorf("New with TokenID %q…: %v", id[:20], err)
		}
	}
}
