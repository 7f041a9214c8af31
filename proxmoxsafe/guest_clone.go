package proxmoxsafe

import (
	"context"
	"strconv"
)

// OpCloneGuest is the name of [Client.CloneGuest].
const OpCloneGuest Operation = "CloneGuest"

// cloneGuestOp declares [Client.CloneGuest].
var cloneGuestOp = operation{verify: provisionVerifier, info: OperationInfo{
	Name:         OpCloneGuest,
	Class:        ClassProvision,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/clone",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "clone", Risk: riskCreate},
	},
	ApprovalFormat: "APPROVE clone <node>/<type>/<vmid> newid=<id> full=<1|0>[ target=<node>][ storage=<storage>][ name=<name>|hostname=<name>][ pool=<pool>][ description=sha256:<12 hex>]",
	// Provision: the schema's clone_vm / create_vm permissions, plus the
	// reads of the preconditions (the source's state and config, the
	// node's storages; the new VMID and the template or ISO).
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the source's state, configuration and running tasks first"},
		{Path: pathVMs, Name: "VM.Clone",
			Note: "on the source guest"},
		{Path: pathVMs, Name: "VM.Allocate",
			Note: "on /vms/{newid}, or on the pool the clone joins"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on every storage the clone's disks go to; it also lets the preconditions see the storage"},
		{Path: pathSDNZones, Name: "SDN.Use",
			Note: "on the bridges the source's network devices use (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
	},
}}

// CloneGuest copies a VM or container, or makes a guest from a template
// (class "provision"; POST …/{vmid}/clone, a qmclone or vzclone task whose
// UPID names the source). It runs the pipeline of [Client.GuestPower] on
// the source, plus what only provisioning needs, and refuses with the
// reason and no mutating request when:
//   - the new VMID is in use (in /cluster/resources, or Proxmox's
//     /cluster/nextid?vmid= says so); with NewID 0 the next free VMID is
//     taken and named in the phrase;
//   - the source is locked, or a linked clone is asked of a guest that is
//     not a template, or a full clone of a running container (Proxmox
//     copies a running container only from a snapshot);
//   - the target node is not allowlisted or not online, or a source disk
//     is on storage that is not shared while the clone moves to another
//     node;
//   - Storage does not exist on the node (and the target node), is
//     disabled or inactive, lacks content "images" (VM) or "rootdir"
//     (container), or is not shared while the clone moves to another node;
//   - the pool is protected by the operator.
//
// The approval phrase names the source and every parameter, e.g.
// "APPROVE clone pve1/qemu/9000 newid=123 full=1 target=pve2 storage=ceph".
// With in.Wait it verifies that the clone exists, unlocked, on its node
// with the requested name, description and pool.
func (c *Client) CloneGuest(ctx context.Context, in CloneGuestInput) (*Receipt, error) {
	t := in.Target()
	var newid int
	m := &mutation{decl: &cloneGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "clone",
		input:    in,
		target:   t,
		given:    in.Approval,
		path:     guestPath(t, "clone"),
	}}
	if tn := in.targetNode(); tn != "" {
		m.alsoNodes = []string{tn} // checked by the policy step, like a migration's target
	}
	m.prepare = func(ctx context.Context, m *mutation) error {
		id, err := c.resolveVMID(ctx, in.NewID)
		if err != nil {
			return err
		}
		newid = id
		m.params = in.approvalParams(newid)
		m.form = paramForm(in.requestParams(newid))
		m.newGuest = cloneResult(in, newid)
		return nil
	}
	m.precondition = func(ctx context.Context, s GuestState) error {
		return c.clonePrecondition(ctx, in, s, newid)
	}
	m.effect = func(s GuestState) string { return cloneEffect(in, s, newid) }
	return c.waitIfAsked(ctx, in.Wait, m)
}

// cloneResult is the guest the clone becomes and what must read back.
func cloneResult(in CloneGuestInput, newid int) *NewGuest {
	node := in.Node
	if tn := in.targetNode(); tn != "" {
		node = tn
	}
	ng := &NewGuest{Node: node, Type: in.Type, VMID: newid, Pool: in.Pool}
	if in.Name != "" || in.Description != "" {
		ng.Config = map[string]string{}
		if in.Name != "" {
			ng.Config[in.nameKey()] = in.Name
		}
		if in.Description != "" {
			ng.Config["description"] = in.Description
		}
	}
	return ng
}

func cloneEffect(in CloneGuestInput, s GuestState, newid int) string {
	src := describe(in.Target(), s)
	kind := "a full copy (every disk copied)"
	if in.Linked {
		kind = "a linked clone (sharing the template's base disks)"
	}
	e := "create " + kind + " of " + src + " as " + string(in.Type) + " " + strconv.Itoa(newid)
	if tn := in.targetNode(); tn != "" {
		e += " on " + tn
	}
	if in.Storage != "" {
		e += ", disks on " + in.Storage
	}
	if in.Name != "" {
		e += ", named " + in.Name
	}
	if in.Pool != "" {
		e += ", in pool " + in.Pool
	}
	if s.Status == "running" {
		e += "; the source keeps running while its disks are copied"
	}
	return e + "; the source is locked while the task runs"
}
