package proxmoxsafe

import (
	"context"
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

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

// createVMOp declares [Client.CreateVM].
var createVMOp = operation{verify: provisionVerifier, info: OperationInfo{
	Name:         OpCreateVM,
	Class:        ClassProvision,
	Method:       "POST",
	Route:        "/nodes/{node}/qemu",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "create", Risk: riskCreate},
	},
	ApprovalFormat: "APPROVE create <node>/qemu/<vmid> name=<name> cores=<n> sockets=<n> memory=<MiB> ostype=<ostype> scsihw=virtio-scsi-single scsi0=<storage>:<GiB> net0=<model>,bridge=<bridge>[ ide2=<iso>,media=cdrom][ pool=<pool>][ description=sha256:<12 hex>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Allocate",
			Note: "on /vms/{vmid}, or on the pool the VM joins"},
		{Path: pathVMs, Name: "VM.Config.CPU",
			Note: "cores and sockets (Proxmox checks the config privilege of every option of a create but the disks, which need Datastore.AllocateSpace)"},
		{Path: pathVMs, Name: "VM.Config.Memory"},
		{Path: pathVMs, Name: "VM.Config.Network"},
		{Path: pathVMs, Name: "VM.Config.HWType",
			Note: "the SCSI controller (scsihw)"},
		{Path: pathVMs, Name: "VM.Config.Options",
			Note: "name, ostype, description"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the disk's storage, and on the ISO image's (Datastore.Audit suffices there); it also lets the preconditions see them"},
		{Path: pathSDNZones, Name: "SDN.Use",
			Note: "on the bridge (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
	},
}}

// createContainerOp declares [Client.CreateContainer].
var createContainerOp = operation{verify: provisionVerifier, info: OperationInfo{
	Name:         OpCreateContainer,
	Class:        ClassProvision,
	Method:       "POST",
	Route:        "/nodes/{node}/lxc",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "create", Risk: riskCreate},
	},
	ApprovalFormat: "APPROVE create <node>/lxc/<vmid> ostemplate=<volume> hostname=<name> cores=<n> memory=<MiB> swap=<MiB> rootfs=<storage>:<GiB> net0=name=eth0,bridge=<bridge>,ip=<ip>[,gw=<gw>] unprivileged=<1|0>[ ssh-public-keys=sha256:<12 hex>][ pool=<pool>][ description=sha256:<12 hex>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Allocate",
			Note: "on /vms/{vmid}, or on the pool the container joins"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the root disk's storage and the template's; it also lets the preconditions see them"},
		{Path: pathSDNZones, Name: "SDN.Use",
			Note: "on the bridge (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
		{Path: pathRoot, Name: "Sys.Modify", Optional: true,
			Note: "only for a privileged container"},
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

// CreateVM creates a QEMU VM with one disk, one network device and
// optionally an ISO image in a CD-ROM drive (class "provision"; POST
// /nodes/{node}/qemu, a qmcreate task). It refuses, with no mutating
// request, a VMID in use, a node that is not online, a disk storage that
// does not exist on the node, is disabled or inactive or lacks content
// "images", an ISO that is not on the node, and a protected pool. It
// never starts the VM (guest_power does, under its own approval). The
// phrase names every parameter sent, e.g. "APPROVE create pve1/qemu/123
// name=web1 cores=2 sockets=1 memory=2048 ostype=l26
// scsihw=virtio-scsi-single scsi0=local-lvm:32 net0=virtio,bridge=vmbr0".
// With in.Wait it verifies that the VM exists, unlocked, with that
// configuration.
func (c *Client) CreateVM(ctx context.Context, in CreateVMInput) (*Receipt, error) {
	return c.create(ctx, createSpec{
		decl: &createVMOp, typ: TypeQEMU, node: in.Node, vmid: in.VMID, name: in.Name, pool: in.Pool,
		plan: in.Plan, given: in.Approval, wait: in.Wait, input: in, params: in.params,
		storage: in.DiskStorage, content: "images", volume: in.ISO, volumeContent: "iso",
	})
}

// CreateContainer creates an LXC container from an OS template (class
// "provision"; POST /nodes/{node}/lxc, a vzcreate task), unprivileged
// unless in.Privileged, with SSH public keys for root and never a
// password. It refuses, with no mutating request, a VMID in use, a node
// that is not online, a root disk storage that does not exist on the node,
// is disabled or inactive or lacks content "rootdir", a template volume
// that is not on the node, and a protected pool. It never starts the
// container. With in.Wait it verifies that the container exists,
// unlocked, with the requested configuration.
func (c *Client) CreateContainer(ctx context.Context, in CreateContainerInput) (*Receipt, error) {
	return c.create(ctx, createSpec{
		decl: &createContainerOp, typ: TypeLXC, node: in.Node, vmid: in.VMID, name: in.Hostname, pool: in.Pool,
		plan: in.Plan, given: in.Approval, wait: in.Wait, input: in, params: in.params,
		storage: in.RootfsStorage, content: "rootdir", volume: in.OSTemplate, volumeContent: "vztmpl",
	})
}

// createSpec is what CreateVM and CreateContainer share.
type createSpec struct {
	decl                  *operation
	typ                   GuestType
	node                  string
	vmid                  int
	name, pool            string
	plan                  bool
	given                 string
	wait                  *WaitOptions
	input                 any
	params                func(vmid int) []ApprovalParam
	storage, content      string // the disk's storage and the content it needs
	volume, volumeContent string // the ISO or template ("" for none)
}

func (c *Client) create(ctx context.Context, sp createSpec) (*Receipt, error) {
	t := Target{Node: sp.node, Type: sp.typ, VMID: sp.vmid}
	var sent []ApprovalParam
	m := &mutation{decl: sp.decl, mutationCall: mutationCall{
		planOnly: sp.plan,
		action:   "create",
		input:    sp.input,
		target:   t,
		given:    sp.given,
		path:     pve.Path("nodes", sp.node, string(sp.typ)),
	}}
	m.prepare = func(ctx context.Context, m *mutation) error {
		id, err := c.resolveVMID(ctx, sp.vmid)
		if err != nil {
			return err
		}
		m.target.VMID = id
		sent = sp.params(id)
		m.params = phraseParams(sent)
		m.form = paramForm(sent)
		ng := &NewGuest{Node: m.target.Node, Type: m.target.Type, VMID: m.target.VMID, Config: map[string]string{}, Pool: sp.pool}
		for _, p := range sent {
			if !expectIgnored[p.Name] {
				ng.Config[p.Name] = p.Value
			}
		}
		m.newGuest = ng
		return nil
	}
	m.fresh = func(context.Context) (GuestState, error) {
		return GuestState{Status: "absent", Name: sp.name}, nil
	}
	m.precondition = func(ctx context.Context, s GuestState) error {
		return c.createPrecondition(ctx, sp, m.target)
	}
	m.effect = func(s GuestState) string { return createEffect(m.target, s, sent) }
	return c.waitIfAsked(ctx, sp.wait, m)
}

// expectIgnored are create parameters that do not read back as sent: the
// VMID is the path, the pool is in /cluster/resources, the template and
// the SSH keys are consumed by the creation.
var expectIgnored = map[string]bool{"vmid": true, "pool": true, "ostemplate": true, "ssh-public-keys": true}

func createEffect(t Target, s GuestState, sent []ApprovalParam) string {
	e := "create " + describe(t, s)
	for _, p := range phraseParams(sent) {
		e += " " + p.Name + "=" + p.Value
	}
	return e + "; it stays stopped until started"
}
