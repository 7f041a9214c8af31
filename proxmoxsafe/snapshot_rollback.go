package proxmoxsafe

import (
	"context"
	"net/url"
)

// OpRollbackSnapshot is the name of [Client.RollbackSnapshot].
const OpRollbackSnapshot Operation = "RollbackSnapshot"

// rollbackSnapshotOp declares [Client.RollbackSnapshot].
var rollbackSnapshotOp = operation{verify: rollbackVerifier, info: OperationInfo{
	Name:         OpRollbackSnapshot,
	Class:        ClassSnapshotAdmin,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/snapshot/{snapname}/rollback",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "rollback", Risk: "everything that changed since the snapshot (disks, configuration and, for a running guest, its memory) is lost for good; a running guest is stopped first."},
	},
	ApprovalFormat: "APPROVE rollback <node>/<type>/<vmid>/<snapname>[ start=1]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, snapshots and running tasks first"},
		{Path: pathVMs, Name: "VM.Snapshot",
			Note: "VM.Snapshot.Rollback alone also suffices (Proxmox accepts either)"},
		{Path: pathVMs, Name: "VM.PowerMgmt", Optional: true,
			Note: "only for start=1"},
	},
}}

// RollbackSnapshotInput names the snapshot [Client.RollbackSnapshot]
// rolls a guest back to.
type RollbackSnapshotInput struct {
	GuestRef
	// Name is the snapshot to roll back to; it must exist.
	Name string `json:"snapname" validate:"required,pve_snapname"`
	// Start starts the guest after the rollback. A QEMU snapshot with RAM
	// starts the VM anyway. It is part of the approval phrase.
	Start bool `json:"start,omitempty"`
	Controls
}

// Target returns the snapshot the input names.
func (in RollbackSnapshotInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID, Snapshot: in.Name}
}

func (in RollbackSnapshotInput) approvalParams() []ApprovalParam {
	if in.Start {
		return []ApprovalParam{{Name: "start", Value: "1"}}
	}
	return nil
}

// ApprovalPhrase returns the phrase that approves this input.
func (in RollbackSnapshotInput) ApprovalPhrase() string {
	return ApprovalPhrase("rollback", in.Target(), in.approvalParams()...)
}

// RollbackSnapshot rolls a guest back to one of its snapshots (class
// "snapshot-admin"; POST …/snapshot/{snapname}/rollback, a qmrollback or
// vzrollback task). Everything that changed since the snapshot (disks,
// config, and for a running guest its memory) is lost; Proxmox stops a
// running guest first. It runs the pipeline of [Client.GuestPower]: the
// guest must not be protected, locked or a template, and the snapshot
// must exist in the fresh snapshot list. The effect shown to the approver
// says that later state is lost and whether the snapshot has RAM (then
// the VM runs afterwards). With in.Wait it verifies that the guest's
// current state is based on the snapshot.
func (c *Client) RollbackSnapshot(ctx context.Context, in RollbackSnapshotInput) (*Receipt, error) {
	t := in.Target()
	form := url.Values{}
	if in.Start {
		form.Set("start", "1")
	}
	var hasRAM bool
	found := newPrefetch(func(ctx context.Context) (*rawSnapshotEntry, error) { return c.findSnapshot(ctx, t) })
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &rollbackSnapshotOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "rollback",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		prefetch: []prefetcher{found},
		precondition: func(ctx context.Context, s GuestState) error {
			if err := snapshotAdminPrecondition(t, s); err != nil {
				return err
			}
			snap, err := found.get(ctx)
			if err != nil {
				return err
			}
			if snap == nil || t.Snapshot == "current" {
				return refuse(ErrPrecondition, "%s has no snapshot named %s", describe(t, s), t.Snapshot)
			}
			hasRAM = bool(snap.VMState)
			return nil
		},
		effect: func(s GuestState) string {
			e := "roll " + describe(t, s) + " back to snapshot " + t.Snapshot + ": every change made since the snapshot (disks and configuration) is lost"
			if s.Status == "running" {
				e += "; the running guest is stopped first and its present memory is lost"
			}
			switch {
			case hasRAM:
				e += "; the snapshot includes RAM, so the VM runs again afterwards as it was at the snapshot"
			case in.Start:
				e += "; the snapshot has no RAM: the guest is started afterwards (a fresh boot)"
			default:
				e += "; the snapshot has no RAM: the guest stays stopped afterwards"
			}
			return e
		},
		path: guestPath(t, "snapshot", t.Snapshot, "rollback"),
		form: form,
	}})
}

// findSnapshot returns the named snapshot from the fresh snapshot list,
// or nil when it is not there (the "current" pseudo-entry never counts).
func (c *Client) findSnapshot(ctx context.Context, t Target) (*rawSnapshotEntry, error) {
	var snaps []rawSnapshotEntry
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return nil, err
	}
	for i := range snaps {
		if string(snaps[i].Name) == t.Snapshot && t.Snapshot != "current" {
			return &snaps[i], nil
		}
	}
	return nil, nil
}

// currentParent returns the snapshot the guest's present state is based
// on: the parent of the snapshot list's "current" pseudo-entry.
func (c *Client) currentParent(ctx context.Context, t Target) (string, error) {
	var snaps []rawSnapshotEntry
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return "", err
	}
	for _, s := range snaps {
		if string(s.Name) == "current" {
			return string(s.Parent), nil
		}
	}
	return "", nil
}

// rollbackVerifier proves a rollback: the guest's current state is based
// on the snapshot (the parent of the snapshot list's "current" entry).
var rollbackVerifier = &verifier{needs: "a snapshot name", proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	name := r.Target.Snapshot
	if name == "" {
		return proof{}, errUnknownAction
	}
	return proof{what: snapshotWhat(r), expected: "the current state based on snapshot " + name, ofSnapshot: true,
		observe: func(ctx context.Context, w *waiter) (bool, error) {
			parent, err := w.c.currentParent(ctx, w.r.Target)
			if err != nil {
				return false, err
			}
			w.out.Observed = "current state based on " + parent
			if parent == "" {
				w.out.Observed = "current state based on no snapshot"
			}
			return parent == name, nil
		}}, nil
}}
