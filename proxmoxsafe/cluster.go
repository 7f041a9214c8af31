package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

type rawClusterStatusEntry struct {
	Type    string     `json:"type"`
	Name    pve.String `json:"name"`
	NodeID  pve.Int    `json:"nodeid"`
	Online  pve.Bool   `json:"online"`
	Quorate pve.Bool   `json:"quorate"`
	IP      pve.String `json:"ip"`
	Level   pve.String `json:"level"`
	Local   pve.Bool   `json:"local"`
}

type rawVersion struct {
	Version pve.String `json:"version"`
	Release pve.String `json:"release"`
}

// ClusterStatus reports the cluster's name, quorum, members and the Proxmox
// VE version. It reads /cluster/status and /version; it is cluster-wide and
// not limited by the node allowlist, since it names nodes but reads nothing
// from inside them.
func (c *Client) ClusterStatus(ctx context.Context) (*ClusterStatusResult, error) {
	start := time.Now()
	var entries []rawClusterStatusEntry
	if err := c.get(ctx, "/cluster/status", nil, &entries); err != nil {
		return nil, c.logged(ctx, "ClusterStatus", start, err)
	}
	var ver rawVersion
	if err := c.get(ctx, "/version", nil, &ver); err != nil {
		return nil, c.logged(ctx, "ClusterStatus", start, err)
	}
	res := &ClusterStatusResult{Version: line(string(ver.Version), 64), Nodes: []ClusterNode{}}
	quorate := true
	for _, e := range entries {
		switch e.Type {
		case "cluster":
			res.Clustered = true
			res.Name = line(string(e.Name), 64)
			quorate = bool(e.Quorate)
		case "node":
			res.Nodes = append(res.Nodes, ClusterNode{
				Name:   line(string(e.Name), 64),
				NodeID: int(e.NodeID),
				Online: bool(e.Online),
				IP:     line(string(e.IP), 64),
				Level:  line(string(e.Level), 16),
				Local:  bool(e.Local),
			})
		}
	}
	res.Quorate = quorate
	slices.SortFunc(res.Nodes, func(a, b ClusterNode) int { return strings.Compare(a.Name, b.Name) })
	c.logged(ctx, "ClusterStatus", start, nil)
	return res, nil
}

// line sanitizes a single-line string from Proxmox and caps it.
func line(s string, max int) string {
	out, _ := sanitize.Cap(sanitize.Line(s), max)
	return out
}

// logged writes the operation's log line and returns err unchanged.
func (c *Client) logged(ctx context.Context, op string, start time.Time, err error, attrs ...slog.Attr) error {
	attrs = append(attrs, slog.String("op", op), slog.Duration("duration", time.Since(start)))
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
