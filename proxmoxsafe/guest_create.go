package proxmoxsafe

import (
	"context"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpCreateVM is the name of [Client.CreateVM].
const OpCreateVM Operation = "CreateVM"

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

// OpCreateContainer is the name of [Client.CreateContainer].
const OpCreateContainer Operation = "CreateContainer"

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
