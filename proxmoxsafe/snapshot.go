package proxmoxsafe

import (
	"context"
	"net/url"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

type rawSnapshot struct {
	Name pve.String `json:"name"`
}

// SnapshotGuest takes a snapshot of one guest.
//
// It runs the same safety pipeline as [Client.GuestPower] with the
// "snapshot" class: the guest must not be locked or a template, and the
// snapshot name must not exist yet. in.Approval must equal
// [SnapshotGuestInput.ApprovalPhrase]: with VMState the phrase ends in
// " vmstate=1", so a plain snapshot's approval never covers a memory dump.
// With in.Wait
// set, it then waits until the snapshot is listed, as [Client.GuestPower]
// does for power states.
func (c *Client) SnapshotGuest(ctx context.Context, in SnapshotGuestInput) (*Receipt, error) {
	t := in.Target()
	form := url.Values{"snapname": {in.Name}}
	if in.Description != "" {
		form.Set("description", in.Description)
	}
	if in.VMState {
		form.Set("vmstate", "1")
	}
	return c.waitIfAsked(ctx, in.Wait, &mutation{
		op:     "SnapshotGuest",
		class:  ClassSnapshot,
		action: "snapshot",
		input:  in,
		target: t,
		params: in.approvalParams(),
		given:  in.Approval,
		precondition: func(ctx context.Context, s GuestState) error {
			return c.snapshotPrecondition(ctx, t, s)
		},
		effect: func(s GuestState) string {
			e := "take snapshot " + t.Snapshot + " of " + describe(t, s)
			if in.VMState {
				e += ", including its memory"
			}
			return e
		},
		path: guestPath(t, "snapshot"),
		form: form,
	})
}

func (c *Client) snapshotPrecondition(ctx context.Context, t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates cannot have snapshots", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	}
	var snaps []rawSnapshot
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return err
	}
	for _, sn := range snaps {
		// Proxmox compares snapshot names exactly (config section keys).
		if string(sn.Name) == t.Snapshot {
			return refuse(ErrPrecondition, "%s already has a snapshot named %s", who, sn.Name)
		}
	}
	return nil
}
