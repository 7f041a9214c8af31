package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// TestDocLinks: every [link] in the package comment names an identifier
// that exists, so a rename cannot leave the overview pointing at nothing.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	testutil.CheckDocLinks(t, ".", map[string]string{"proxmoxsafe": "../proxmoxsafe"})
}
