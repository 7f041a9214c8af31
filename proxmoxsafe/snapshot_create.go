package proxmoxsafe

import (
	"context"
	"net/url"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpSnapshotGuest is the name of [Client.SnapshotGuest].
const OpSnapshotGuest Operation = "SnapshotGuest"

// snapshotGuestOp declares [Client.SnapshotGuest].
var snapshotGuestOp = operation{verify: snapshotVerifier, info: OperationInfo{
	Name:         OpSnapshotGuest,
	Class:        ClassSnapshot,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/snapshot",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "snapshot", Risk: "the snapshot uses storage until deleted; a snapshot with vmstate also saves memory."},
	},
	ApprovalFormat: "APPROVE snapshot <node>/<type>/<vmid>/<snapname>[ vmstate=1]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, snapshots and running tasks first; without Sys.Audit on the node only the token's own tasks are seen"},
		{Path: pathVMs, Name: "VM.Snapshot"},
	},
}}

// SnapshotGuestInput is a request to take a snapshot of a guest.
type SnapshotGuestInput struct {
	GuestRef
	// Name is the snapshot name: a letter, then 1 to 39 letters, digits,
	// '_' or '-'; not a name Proxmox reserves.
	Name string `json:"snapname" validate:"required,pve_snapname" jsonschema:"A letter, then 1-39 letters, digits, _ or -."`
	// Description is free text stored with the snapshot (no control characters).
	Description string `json:"description,omitempty" validate:"max=1024,pve_text"`
	// VMState also saves the VM's RAM. QEMU only.
	VMState bool `json:"vmstate,omitempty"`
	Controls
}

// Target returns the snapshot the input names.
func (in SnapshotGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID, Snapshot: in.Name}
}

// ApprovalPhrase returns the phrase that approves this input:
// [ApprovalPhrase] for "snapshot", the snapshot's target and, when VMState
// is set, "vmstate=1", so approving a plain snapshot never approves saving
// the VM's memory (or the reverse). Description is not part of it: it is
// free text stored with the snapshot and changes nothing on the guest.
func (in SnapshotGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("snapshot", in.Target(), in.approvalParams()...)
}

// approvalParams are the parameters that change what the snapshot does.
func (in SnapshotGuestInput) approvalParams() []ApprovalParam {
	if in.VMState {
		return []ApprovalParam{{Name: "vmstate", Value: "1"}}
	}
	return nil
}

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
	snaps := c.snapshotList(t)
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &snapshotGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "snapshot",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		prefetch: []prefetcher{snaps},
		precondition: func(ctx context.Context, s GuestState) error {
			return snapshotPrecondition(ctx, t, s, snaps)
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
	}})
}

// snapshotList is the read of t's snapshot list, for a precondition's
// prefetch.
func (c *Client) snapshotList(t Target) *prefetch[[]rawSnapshot] {
	return newPrefetch(func(ctx context.Context) ([]rawSnapshot, error) {
		var snaps []rawSnapshot
		if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
			return nil, err
		}
		return snaps, nil
	})
}

func snapshotPrecondition(ctx context.Context, t Target, s GuestState, list *prefetch[[]rawSnapshot]) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates cannot have snapshots", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	}
	snaps, err := list.get(ctx)
	if err != nil {
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

// snapshotVerifier proves a snapshot by the name in the guest's snapshot
// list.
var snapshotVerifier = &verifier{needs: "a snapshot name", proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	return snapshotListProof(r, true)
}}

// snapshotListProof waits until the receipt's snapshot is listed (listed
// true) or gone from the list (false).
func snapshotListProof(r *Receipt, listed bool) (proof, error) {
	name := r.Target.Snapshot
	if name == "" {
		return proof{}, errUnknownAction
	}
	expected := "snapshot " + name + " in the snapshot list"
	if !listed {
		expected = "snapshot " + name + " gone from the snapshot list"
	}
	return proof{what: snapshotWhat(r), expected: expected, ofSnapshot: true,
		observe: func(ctx context.Context, w *waiter) (bool, error) {
			present, err := w.c.snapshotPresent(ctx, w.r.Target)
			if err != nil {
				return false, err
			}
			if present {
				w.out.Observed = "snapshot " + name + " present"
			} else {
				w.out.Observed = "snapshot " + name + " not in the snapshot list"
			}
			return present == listed, nil
		}}, nil
}

// snapshotWhat names a snapshot action's subject: "snapshot s1 of
// pve1/qemu/101".
func snapshotWhat(r *Receipt) string {
	return "snapshot " + r.Target.Snapshot + " of " + r.Target.guestString()
}

// snapshotPresent reports whether the guest's snapshot list names t.Snapshot
// (compared exactly, like Proxmox's config sections).
func (c *Client) snapshotPresent(ctx context.Context, t Target) (bool, error) {
	var snaps []rawSnapshot
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return false, err
	}
	for _, s := range snaps {
		if string(s.Name) == t.Snapshot {
			return true, nil
		}
	}
	return false, nil
}
