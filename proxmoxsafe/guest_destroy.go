package proxmoxsafe

import (
	"context"
	"strconv"
	"strings"
)

// OpDestroyGuest is the name of [Client.DestroyGuest].
const OpDestroyGuest Operation = "DestroyGuest"

// destroyGuestOp declares [Client.DestroyGuest].
var destroyGuestOp = operation{verify: destroyVerifier, info: OperationInfo{
	Name:         OpDestroyGuest,
	Class:        ClassDestroy,
	Method:       "DELETE",
	Route:        "/nodes/{node}/{type}/{vmid}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "destroy", Risk: "the guest, its disks and snapshots are gone for good; only a backup can bring them back."},
	},
	ApprovalFormat: "APPROVE destroy <node>/<type>/<vmid> purge=<1|0> destroy-unreferenced-disks=<1|0>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, configuration, snapshots and running tasks first (for a template, also the configurations of the guests that could be its linked clones)"},
		{Path: pathVMs, Name: "VM.Allocate",
			Note: "purge needs nothing more: Proxmox removes the guest from backup jobs, replication jobs and HA under VM.Allocate alone"},
	},
}}

// DestroyGuestInput names the guest [Client.DestroyGuest] deletes, and
// the two choices Proxmox leaves to the caller. Both choices are always
// part of the approval phrase, with their value, so an approval given
// for one combination never approves another.
type DestroyGuestInput struct {
	GuestRef
	// Purge also removes the guest from backup jobs, replication jobs
	// and HA (Proxmox's purge). Without it Proxmox refuses an HA-managed
	// guest and a guest with replication jobs, and backup jobs keep
	// naming the VMID. The zero value is false.
	Purge bool `json:"purge" jsonschema:"Also remove it from backup, replication and HA jobs."`
	// DestroyUnreferencedDisks also destroys every disk with the guest's
	// VMID on any enabled storage that its configuration does not
	// reference (Proxmox's destroy-unreferenced-disks). The zero value is
	// false: such disks are kept.
	DestroyUnreferencedDisks bool `json:"destroy_unreferenced_disks" jsonschema:"Also delete disks with its VMID its config does not name."`
	Controls
}

// Target returns the guest the input names.
func (in DestroyGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// approvalParams binds both choices, always, in Proxmox's names.
func (in DestroyGuestInput) approvalParams() []ApprovalParam {
	return []ApprovalParam{
		{Name: "purge", Value: boolParam(in.Purge)},
		{Name: "destroy-unreferenced-disks", Value: boolParam(in.DestroyUnreferencedDisks)},
	}
}

// ApprovalPhrase returns the phrase that approves this input where the
// operator allows the phrase level, e.g.
// "APPROVE destroy pve1/qemu/101 purge=1 destroy-unreferenced-disks=0".
func (in DestroyGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("destroy", in.Target(), in.approvalParams()...)
}

// DestroyGuest deletes a guest with its disks (class "destroy"; DELETE
// /nodes/{node}/{type}/{vmid}, a qmdestroy or vzdestroy task). It cannot
// be undone. It runs the pipeline of [Client.GuestPower] and refuses,
// before anything is sent, what Proxmox would refuse or what is unsafe:
// a guest that is not stopped, locked (a hibernated VM, locked
// "suspended", is the exception Proxmox makes too), protected by
// Proxmox's own protection flag or by the operator's policy, HA-managed
// without Purge (or HA-managed with the HA manager asked to start it), or
// a template that linked clones on the allowlisted nodes still use. It
// never sends skiplock, nor a container's force.
//
// The effect shown to the approver lists what will be lost: the disks
// of the configuration with their sizes (and the ones kept because
// another guest owns them), the number of snapshots, a hibernated VM's
// saved memory, and with Purge the HA resource and job entries. The
// class's default approval is one only a person gives
// ([DefaultApprovals]). With in.Wait it verifies that the guest is gone
// from /cluster/resources; a task that fails is reported as failed.
func (c *Client) DestroyGuest(ctx context.Context, in DestroyGuestInput) (*Receipt, error) {
	t := in.Target()
	var facts destroyFacts
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &destroyGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "destroy",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		precondition: func(ctx context.Context, s GuestState) error {
			if err := destroyStatePrecondition(t, s, in.Purge); err != nil {
				return err
			}
			f, err := c.readDestroyFacts(ctx, t, s)
			if err != nil {
				return err
			}
			facts = f
			return f.refusal(t, s)
		},
		effect: func(s GuestState) string { return facts.effect(t, s, in) },
		path:   guestPath(t),
		form:   paramForm(in.approvalParams()), // exactly the approved choices
	}})
}

// destroyStatePrecondition refuses from status/current alone.
func destroyStatePrecondition(t Target, s GuestState, purge bool) error {
	who := describe(t, s)
	switch {
	case s.Status != "stopped":
		state := s.Status
		if s.Paused() {
			state = "running (paused)"
		}
		return refuse(ErrPrecondition, "%s is %s; Proxmox destroys only a stopped guest (it answers %q): shut it down first", who, state, runningDestroyError(t))
	case s.Lock != "" && !(t.Type == TypeQEMU && s.Lock == "suspended"):
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish (a lock is never skipped)", who, s.Lock)
	case s.HAManaged && !purge:
		return refuse(ErrPrecondition, "%s is HA-managed; Proxmox refuses to destroy it without purge (\"unable to remove %s %d - used in HA resources and purge parameter not set.\"): set purge to also remove its HA resource", who, kindShort(t), t.VMID)
	case s.HAManaged && s.HAState == "started":
		return refuse(ErrPrecondition, "%s is HA-managed with HA state started: the HA manager may start it at any moment; set its HA state to stopped (or remove it from HA) first", who)
	}
	return nil
}

// runningDestroyError is Proxmox's answer to a destroy of a running guest.
func runningDestroyError(t Target) string {
	if t.Type == TypeLXC {
		return "unable to destroy CT " + strconv.Itoa(t.VMID) + " - container is running"
	}
	return "VM " + strconv.Itoa(t.VMID) + " is running - destroy failed"
}

// kindShort is "VM" or "CT", as Proxmox's messages name guests.
func kindShort(t Target) string {
	if t.Type == TypeLXC {
		return "CT"
	}
	return "VM"
}

// destroyFacts is what the configuration and snapshot list say will be
// lost, read fresh for each check.
type destroyFacts struct {
	protection bool
	template   bool
	disks      []destroyDisk
	snapshots  int
	// clones are the linked clones found of a template ("VM 101 on pve1
	// uses local-lvm:base-100-disk-0").
	clones []string
	// unchecked counts guests that could be linked clones but were not
	// read: on nodes outside the allowlist, or beyond the scan's cap.
	unchecked int
}

// destroyDisk is one volume of the configuration.
type destroyDisk struct {
	key, volume, size string
	// owner is the VMID the volume name carries; 0 when unknown.
	owner int
}

// readDestroyFacts reads the configuration (protection flag, template,
// disks), the snapshot list and, for a template, its linked clones.
func (c *Client) readDestroyFacts(ctx context.Context, t Target, s GuestState) (destroyFacts, error) {
	conf, err := c.rawConfig(ctx, t)
	if err != nil {
		return destroyFacts{}, err
	}
	f := destroyFacts{
		protection: conf["protection"] == "1",
		template:   s.Template || conf["template"] == "1",
		disks:      configDisks(t.Type, conf),
	}
	var snaps []rawSnapshotEntry
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return destroyFacts{}, err
	}
	for _, sn := range snaps {
		if string(sn.Name) != "current" {
			f.snapshots++
		}
	}
	if f.template && !f.protection {
		if f.clones, f.unchecked, err = c.linkedClones(ctx, t); err != nil {
			return destroyFacts{}, err
		}
	}
	return f, nil
}

// refusal refuses from the configuration: Proxmox's protection flag and
// a template still used by linked clones.
func (f destroyFacts) refusal(t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case f.protection:
		return refuse(ErrPrecondition, "%s has Proxmox's protection flag set (protection: 1); Proxmox refuses to remove it (\"can't remove %s %d - protection mode enabled\"): only someone who may change its configuration can clear the flag", who, kindShort(t), t.VMID)
	case len(f.clones) > 0:
		return refuse(ErrPrecondition, "%s is a template that linked clones still use (%s); Proxmox fails the destroy (\"base volume ... is still in use by linked cloned\"): destroy those clones first, or replace them with full clones", who, strings.Join(f.clones, "; "))
	}
	return nil
}

// effect lists what will be lost, for the approver and the plan.
func (f destroyFacts) effect(t Target, s GuestState, in DestroyGuestInput) string {
	var b strings.Builder
	b.WriteString("destroy " + describe(t, s) + " for good (only a backup can bring it back): ")
	var lost, kept []string
	for _, d := range f.disks {
		desc := d.key + " " + d.volume
		if d.size != "" {
			desc += " (" + d.size + ")"
		}
		if d.owner != 0 && d.owner != t.VMID {
			kept = append(kept, desc+", owned by guest "+strconv.Itoa(d.owner))
			continue
		}
		lost = append(lost, desc)
	}
	if len(lost) == 0 {
		b.WriteString("it has no disk volume in its configuration")
	} else {
		b.WriteString("its disks are deleted: " + strings.Join(lost, ", "))
	}
	if len(kept) > 0 {
		b.WriteString("; kept (another guest owns them): " + strings.Join(kept, ", "))
	}
	switch f.snapshots {
	case 0:
		b.WriteString("; it has no snapshots")
	case 1:
		b.WriteString("; its 1 snapshot is deleted")
	default:
		b.WriteString("; its " + strconv.Itoa(f.snapshots) + " snapshots are deleted")
	}
	if s.Lock == "suspended" {
		b.WriteString("; it is hibernated: its saved memory state is deleted too")
	}
	b.WriteString("; its configuration, firewall rules and permissions are removed")
	if in.DestroyUnreferencedDisks {
		b.WriteString("; destroy-unreferenced-disks=1: every disk with VMID " + strconv.Itoa(t.VMID) + " on any enabled storage that the configuration does not name is deleted too")
	} else {
		b.WriteString("; disks with VMID " + strconv.Itoa(t.VMID) + " that the configuration does not name are kept")
	}
	if in.Purge {
		b.WriteString("; purge=1: it is removed from backup jobs and replication jobs")
		if s.HAManaged {
			b.WriteString(" and its HA resource is deleted")
		}
	} else {
		b.WriteString("; purge=0: backup jobs that name it keep its VMID (Proxmox refuses when replication jobs exist)")
	}
	if f.template {
		b.WriteString("; it is a template: no linked clone on the allowlisted nodes uses it")
		if f.unchecked > 0 {
			b.WriteString(" (" + strconv.Itoa(f.unchecked) + " guests elsewhere were not checked; Proxmox fails the task if one of them does)")
		}
	}
	return b.String()
}

// destroyVerifier proves a destroy: no entry for the VMID in
// /cluster/resources.
var destroyVerifier = &verifier{proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	return proof{what: r.Action + " of " + r.Target.guestString(), expected: "the guest gone from /cluster/resources",
		observe: func(ctx context.Context, w *waiter) (bool, error) {
			listed, err := w.c.guestListed(ctx, w.r.Target)
			if err != nil {
				return false, err
			}
			w.out.Observed = "gone from /cluster/resources"
			if listed != "" {
				w.out.Observed = "still in /cluster/resources (" + listed + ")"
			}
			return listed == "", nil
		}}, nil
}}
