package doctor

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// StartupWarnings is the privilege check a server runs in the background
// at start: what is missing or dangerous is logged on warn, and nothing
// fails. A check cut short because the server stopped says nothing.
func StartupWarnings(ctx context.Context, client *proxmoxsafe.Client, opts *mcpserver.Options, warn *slog.Logger) {
	if errors.Is(ctx.Err(), context.Canceled) {
		return // the server stopped before the check began
	}
	{
		res, err := mcpserver.CheckPermissions(ctx, client, opts)
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			return // the server is stopping: the check did not fail, it was not needed any more
		}
		if err != nil {
			warn.Warn("startup privilege check did not complete; the server runs anyway (run `proxmox-safe-mcp doctor` for details)",
				slog.String("error", err.Error()))
			return
		}
		for _, m := range res.Missing {
			if m.Optional {
				continue
			}
			warn.Warn("the API token lacks privileges some tools need; they will fail with 403",
				slog.String("path", m.Path), slog.String("privileges", strings.Join(m.Privileges, ",")), slog.String("grant", m.Command))
		}
		for _, x := range res.Excess {
			if x.Dangerous {
				warn.Warn("the API token holds a dangerous privilege no enabled tool needs",
					slog.String("privilege", x.Privilege), slog.String("paths", strings.Join(x.Paths, ",")), slog.String("risk", x.Risk))
			}
		}
	}
}
