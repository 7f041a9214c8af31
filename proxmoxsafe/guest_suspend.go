package proxmoxsafe

import (
	"context"
	"net/url"
)

// OpSuspendGuest is the name of [Client.SuspendGuest].
const OpSuspendGuest Operation = "SuspendGuest"

// suspendGuestOp declares [Client.SuspendGuest].
var suspendGuestOp = operation{verify: suspendVerifier, info: OperationInfo{
	Name:         OpSuspendGuest,
	Class:        ClassPowerExtra,
	Method:       "POST",
	Route:        "/nodes/{node}/qemu/{vmid}/status/suspend",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "suspend", Risk: riskShutdown},
	},
	ApprovalFormat: "APPROVE suspend <node>/qemu/<vmid>[ todisk=1]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the VM's state and running tasks first"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
		{Path: pathVMs, Name: "VM.Config.Disk", Optional: true,
			Note: "only for todisk (hibernation), with Datastore.AllocateSpace on the storage for the memory state"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace", Optional: true,
			Note: "only for todisk: the storage that receives the memory state"},
	},
}}

// The "power-extra" class: suspend and resume a QEMU VM. Containers are
// left out on purpose: Proxmox has no freeze endpoint for containers, and
// its LXC suspend is an experimental CRIU checkpoint (the API itself says
// "This is experimental"), which this server does not expose.

// SuspendGuestInput names the VM [Client.SuspendGuest] suspends.
type SuspendGuestInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	// Type must be "qemu": containers have no supported suspend.
	Type GuestType `json:"type" validate:"required,oneof=qemu"`
	VMID int       `json:"vmid" validate:"required,pve_vmid"`
	// ToDisk hibernates the VM: its memory is written to a state volume
	// and the VM stops (locked "suspended") until it is resumed or
	// started. false pauses it in memory. It is part of the approval
	// phrase (" todisk=1").
	ToDisk bool `json:"todisk,omitempty"`
	Controls
}

// Target returns the VM the input names.
func (in SuspendGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// approvalParams binds todisk into the phrase: approving a pause never
// approves a hibernation, which writes the memory to a storage and stops
// the VM.
func (in SuspendGuestInput) approvalParams() []ApprovalParam {
	if in.ToDisk {
		return []ApprovalParam{{Name: "todisk", Value: "1"}}
	}
	return nil
}

// ApprovalPhrase returns the phrase that approves this input.
func (in SuspendGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("suspend", in.Target(), in.approvalParams()...)
}

// SuspendGuest pauses a running QEMU VM, or with ToDisk hibernates it
// (class "power-extra"; POST …/status/suspend, a qmpause or qmsuspend
// task). It runs the pipeline of [Client.GuestPower]: the VM must be
// running and not paused, not locked, not a template; a hibernation of an
// HA-managed VM is refused (Proxmox refuses it too). The approval phrase
// includes " todisk=1" for a hibernation.
func (c *Client) SuspendGuest(ctx context.Context, in SuspendGuestInput) (*Receipt, error) {
	t := in.Target()
	form := url.Values{}
	if in.ToDisk {
		form.Set("todisk", "1")
	}
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &suspendGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "suspend",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		precondition: func(_ context.Context, s GuestState) error {
			return suspendPrecondition(t, s, in.ToDisk)
		},
		effect: func(s GuestState) string {
			if in.ToDisk {
				return "hibernate " + describe(t, s) + ": write its memory to a state volume on disk and stop it; it stays locked (suspended) until resumed or started"
			}
			return "pause " + describe(t, s) + " in memory: its CPUs stop, nothing runs until it is resumed"
		},
		path: guestPath(t, "status", "suspend"),
		form: form,
	}})
}

// hibernated reports a VM suspended to disk: stopped, locked "suspended".
func hibernated(s GuestState) bool { return s.Status == "stopped" && s.Lock == "suspended" }

func suspendPrecondition(t Target, s GuestState, toDisk bool) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates do not run", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case s.Status != "running":
		return refuse(ErrPrecondition, "%s is not running (%s); only a running VM can be suspended", who, s.Status)
	case s.Paused():
		return refuse(ErrPrecondition, "%s is already paused", who)
	case toDisk && s.HAManaged:
		return refuse(ErrPrecondition, "%s is HA-managed; Proxmox does not suspend an HA-managed VM to disk (pause it without todisk, or remove it from HA first)", who)
	}
	return haPrecondition("suspend", t, s)
}

// suspendVerifier proves a suspend by its task type: a qmpause task
// pauses the VM (running, paused), a qmsuspend task hibernates it
// (stopped, locked "suspended").
var suspendVerifier = &verifier{proof: func(_ *Client, r *Receipt, ref TaskRef) (proof, error) {
	if ref.Type == "qmsuspend" {
		return stateProof(r, stateWant{status: "stopped", lock: "suspended"}), nil
	}
	return stateProof(r, stateWant{status: "running", paused: true}), nil
}}
