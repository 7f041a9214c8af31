package doctor

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

// TestStartupWarnings: missing privileges are logged with the grant that
// fixes them; a check whose server already stopped logs nothing.
func TestStartupWarnings(t *testing.T) {
	t.Parallel()
	srv := server(t, map[string][]string{"/": {"Sys.Audit"}})
	s := setupFor(t, srv)
	var logs strings.Builder
	warn := slog.New(slog.NewTextHandler(&logs, nil))
	StartupWarnings(t.Context(), s.Client, &mcpserver.Options{ReadOnly: true}, warn)
	if !strings.Contains(logs.String(), "lacks privileges") || !strings.Contains(logs.String(), "pveum acl modify") {
		t.Errorf("logs:\n%s", logs.String())
	}
	logs.Reset()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	StartupWarnings(ctx, s.Client, nil, warn)
	if logs.Len() != 0 {
		t.Errorf("a stopped check logged:\n%s", logs.String())
	}
}
