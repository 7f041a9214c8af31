package proxmoxsafe

import (
	"context"
	"net/url"
)

// OpDeleteSnapshot is the name of [Client.DeleteSnapshot].
const OpDeleteSnapshot Operation = "DeleteSnapshot"

// deleteSnapshotOp declares [Client.DeleteSnapshot].
var deleteSnapshotOp = operation{verify: deleteSnapshotVerifier, info: OperationInfo{
	Name:         OpDeleteSnapshot,
	Class:        ClassSnapshotAdmin,
	Method:       "DELETE",
	Route:        "/nodes/{node}/{type}/{vmid}/snapshot/{snapname}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "delsnapshot", Risk: riskDelete},
	},
	ApprovalFormat: "APPROVE delsnapshot <node>/<type>/<vmid>/<snapname>[ force=1]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, snapshots and running tasks first"},
		{Path: pathVMs, Name: "VM.Snapshot"},
	},
}}

// DeleteSnapshotInput names the snapshot [Client.DeleteSnapshot] deletes.
type DeleteSnapshotInput struct {
	GuestRef
	// Name is the snapshot to delete; it must exist.
	Name string `json:"snapname" validate:"required,pve_snapname"`
	Controls
	// Force removes the snapshot from the configuration even when
	// removing its disk snapshots fails (Proxmox's force). It is part of
	// the approval phrase.
	Force bool `json:"force,omitempty"`
}

// Target returns the snapshot the input names.
func (in DeleteSnapshotInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID, Snapshot: in.Name}
}

// DeleteSnapshot deletes one snapshot of a guest (class "snapshot-admin";
// DELETE …/snapshot/{snapname}, which Proxmox runs as a qmdelsnapshot or
// vzdelsnapshot task). It runs the pipeline of [Client.GuestPower]: the
// guest must not be protected, locked or a template, and the snapshot must
// exist in the fresh snapshot list. Without in.Wait the [Receipt] proves
// submission only. It does not look at keep markers: it deletes what it is told to;
// [Client.CleanupSnapshots] is the operation that honours them.
//
// With in.Force the phrase ends in " force=1". With in.Wait set it waits
// for the task and verifies that the snapshot is gone.
func (c *Client) DeleteSnapshot(ctx context.Context, in DeleteSnapshotInput) (*Receipt, error) {
	m := c.deleteSnapshotMutation(&deleteSnapshotOp, in, in.Target(), in.Approval)
	m.planOnly = in.Plan
	if in.Force {
		m.params = []ApprovalParam{{Name: "force", Value: "1"}}
		m.form.Set("force", "1")
	}
	return c.waitIfAsked(ctx, in.Wait, m)
}

// deleteSnapshotMutation is the one DELETE of a snapshot, shared by
// DeleteSnapshot and each step of CleanupSnapshots.
func (c *Client) deleteSnapshotMutation(op *operation, input any, t Target, given string) *mutation {
	present := newPrefetch(func(ctx context.Context) (bool, error) { return c.snapshotPresent(ctx, t) })
	return &mutation{decl: op, mutationCall: mutationCall{
		action:   "delsnapshot",
		input:    input,
		target:   t,
		given:    given,
		prefetch: []prefetcher{present},
		precondition: func(ctx context.Context, s GuestState) error {
			if err := snapshotAdminPrecondition(t, s); err != nil {
				return err
			}
			present, err := present.get(ctx)
			if err != nil {
				return err
			}
			if !present || t.Snapshot == "current" {
				return refuse(ErrPrecondition, "%s has no snapshot named %s", describe(t, s), t.Snapshot)
			}
			return nil
		},
		effect: func(s GuestState) string {
			return "delete snapshot " + t.Snapshot + " of " + describe(t, s) + " (it cannot be restored afterwards)"
		},
		path: guestPath(t, "snapshot", t.Snapshot),
		form: url.Values{},
	}}
}

// snapshotAdminPrecondition refuses snapshot deletion where Proxmox would
// fail it inside the task: templates and locked guests.
func snapshotAdminPrecondition(t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; Proxmox does not delete a template's snapshots", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	}
	return nil
}

// deleteSnapshotVerifier proves a deletion: the snapshot is gone from the
// guest's snapshot list.
var deleteSnapshotVerifier = &verifier{needs: "a snapshot name", proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	return snapshotListProof(r, false)
}}
