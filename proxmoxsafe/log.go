package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// One log line per operation, with stable keys (op, node, type, vmid,
// upid, status, duration).

// logged writes the operation's log line and returns err unchanged.
func (c *Client) logged(ctx context.Context, op Operation, start time.Time, err error, attrs ...slog.Attr) error {
	attrs = append(attrs, slog.String("op", string(op)), slog.Duration("duration", time.Since(start)))
	level := slog.LevelDebug
	switch {
	case err == nil:
	case isRefusal(err):
		// Refusals are expected outcomes the caller already sees.
		attrs = append(attrs, slog.String("refused", err.Error()))
		level = slog.LevelInfo
	default:
		attrs = append(attrs, slog.String("error", err.Error()))
		level = slog.LevelWarn
	}
	c.log.LogAttrs(ctx, level, "proxmox operation", attrs...)
	return err
}

func isRefusal(err error) bool {
	for _, k := range []error{ErrInvalidInput, ErrNotAllowed, ErrPrecondition, ErrApprovalRequired} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// guestAttrs are the log attributes naming a guest.
func guestAttrs(t Target) []slog.Attr {
	return []slog.Attr{slog.String("node", t.Node), slog.String("type", string(t.Type)), slog.Int("vmid", t.VMID)}
}

func nodeAttr(node string) slog.Attr { return slog.String("node", node) }
