package proxmoxsafe

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

type rawGuestStatus struct {
	Status    pve.String `json:"status"`
	QMPStatus pve.String `json:"qmpstatus"`
	Name      pve.String `json:"name"`
	Lock      pve.String `json:"lock"`
	Template  pve.Bool   `json:"template"`
	HA        struct {
		Managed pve.Bool   `json:"managed"`
		State   pve.String `json:"state"`
	} `json:"ha"`
	Uptime pve.Int `json:"uptime"`
}

func guestPath(t Target, rest ...string) string {
	return pve.Path(append([]string{"nodes", t.Node, string(t.Type), strconv.Itoa(t.VMID)}, rest...)...)
}

// readState reads the guest's status/current: the fresh state every
// precondition is checked against, and the uptime (seconds, never
// negative) that proves a reboot happened.
func (c *Client) readState(ctx context.Context, t Target) (GuestState, int64, error) {
	var raw rawGuestStatus
	if err := c.get(ctx, statusPath(t), nil, &raw); err != nil {
		return GuestState{}, 0, err
	}
	return GuestState{
		Status:    line(string(raw.Status), 16),
		QMPStatus: line(string(raw.QMPStatus), 16),
		Name:      line(string(raw.Name), maxNameLen),
		Lock:      line(string(raw.Lock), 32),
		Template:  bool(raw.Template),
		HAManaged: bool(raw.HA.Managed),
		HAState:   line(string(raw.HA.State), 32),
		Uptime:    time.Duration(max(int64(raw.Uptime), 0)) * time.Second,
	}, max(int64(raw.Uptime), 0), nil
}

// describe names a guest for humans: "VM 101 (web1) on pve1".
func describe(t Target, s GuestState) string {
	kind := "VM"
	if t.Type == TypeLXC {
		kind = "container"
	}
	d := kind + " " + strconv.Itoa(t.VMID)
	if s.Name != "" {
		d += " (" + s.Name + ")"
	}
	return d + " on " + t.Node
}

// openGuestRead is the opening every per-guest read shares: validate the
// input, then check the guest's node against the allowlist. A refusal is
// logged and returned; nothing is sent. It returns the log attributes
// naming the guest.
func (c *Client) openGuestRead(ctx context.Context, op Operation, start time.Time, in any, g GuestRef) ([]slog.Attr, error) {
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	attrs := guestAttrs(g.Target())
	if err := c.policy.checkNode(g.Node); err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	return attrs, nil
}
