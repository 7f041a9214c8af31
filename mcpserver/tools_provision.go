package mcpserver

import (
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Tool names of the provision class (issue 11), off unless the class is
// enabled (the admin profile enables it).
const (
	ToolGuestClone      = "guest_clone"
	ToolVMCreate        = "vm_create"
	ToolContainerCreate = "container_create"
)

// The provision tools' arguments: the library inputs plus waitArgs. They
// have no password parameter, and unknown properties are refused by the
// input schema (additionalProperties: false).
type (
	cloneGuestArgs struct {
		proxmoxsafe.CloneGuestInput
		waitArgs
	}
	createVMArgs struct {
		proxmoxsafe.CreateVMInput
		waitArgs
	}
	createContainerArgs struct {
		proxmoxsafe.CreateContainerInput
		waitArgs
	}
)

func (a cloneGuestArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.CloneGuestInput {
	a.Wait = w
	return a.CloneGuestInput
}

func (a createVMArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.CreateVMInput {
	a.Wait = w
	return a.CreateVMInput
}

func (a createContainerArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.CreateContainerInput {
	a.Wait = w
	return a.CreateContainerInput
}

// provisionAnnotations: creating a guest destroys nothing that exists
// (destructive false), and a second call creates a second guest or is
// refused (not idempotent).
var provisionAnnotations = snapshotAnnotations

// provisionTools are the tools of the provision class. Clone, VM create
// and container create are three tools: their inputs share almost nothing.
func provisionTools() []toolDef {
	return []toolDef{
		mutationTool[cloneGuestArgs](ToolInfo{
			Name:  ToolGuestClone,
			Title: "Clone a guest",
			Description: "Copy one VM or container, or make a new guest from a template: a full, independent copy by default, or with linked: true a linked clone of a template. Optionally on another node (target; the disks must be on shared storage), on another storage (storage, full clones only), with a name (the container's hostname), a pool and a description. The new VMID is newid, or the next free one when omitted. " +
				"Refused (nothing is done) unless the operator enabled the provision class, allows the source's node and the target node and does not protect the source, the new VMID or the pool, and: the new VMID is free, the source exists and is not locked, a linked clone's source is a template, a container to copy in full is stopped, the target node is online, and the storage exists on the node(s), is enabled, active, has content images (VM) or rootdir (container), and is shared when the clone goes to another node. " +
				"Needs the approval phrase \"APPROVE clone <node>/<type>/<vmid> newid=<id> full=<1|0>\" followed by the parameters given (target=, storage=, name= or hostname=, pool=, description=sha256:<digest>), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass newid explicitly on the approving call. " +
				"Returns a receipt with the task UPID (qmclone or vzclone; the new guest is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the new guest exists, unlocked, with the requested name, description and pool. The clone stays stopped: start it with guest_power.",
			Class:          proxmoxsafe.ClassProvision,
			Annotations:    provisionAnnotations,
			ApprovalFormat: "APPROVE clone <node>/<type>/<vmid> newid=<id> full=<1|0>[ target=<node>][ storage=<storage>][ name=<name>|hostname=<name>][ pool=<pool>][ description=sha256:<12 hex>]",
		}, ops(proxmoxsafe.OpCloneGuest), (*proxmoxsafe.Client).CloneGuest, func(_ proxmoxsafe.CloneGuestInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("clone", r) + " as " + newGuestLabel(r)
		}),
		mutationTool[createVMArgs](ToolInfo{
			Name:  ToolVMCreate,
			Title: "Create a VM",
			Description: "Create one QEMU VM with CPU cores (and sockets), memory, one disk (disk_storage, disk_size_gib; SCSI on virtio-scsi-single), one network device (bridge, net_model) and optionally an ISO image in a CD-ROM drive to install from. No password or cloud-init secret is accepted. The VMID is vmid, or the next free one when omitted. The VM is not started. " +
				"Refused (nothing is done) unless the operator enabled the provision class, allows the node and does not protect the VMID or the pool, and: the VMID is free, the node is online, the disk storage exists on the node, is enabled, active and has content images, and the ISO image exists on the node. " +
				"Needs the approval phrase \"APPROVE create <node>/qemu/<vmid>\" followed by every parameter sent (name=, cores=, sockets=, memory=, ostype=, scsihw=, scsi0=<storage>:<GiB>, net0=<model>,bridge=<bridge>, then ide2=, pool=, description=sha256:<digest> where set), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass vmid explicitly on the approving call. " +
				"Returns a receipt with the task UPID (qmcreate; the VM is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the VM exists, unlocked, and its configuration reads back as requested.",
			Class:          proxmoxsafe.ClassProvision,
			Annotations:    provisionAnnotations,
			ApprovalFormat: "APPROVE create <node>/qemu/<vmid> name=<name> cores=<n> sockets=<n> memory=<MiB> ostype=<ostype> scsihw=virtio-scsi-single scsi0=<storage>:<GiB> net0=<model>,bridge=<bridge>[ ide2=<iso>,media=cdrom][ pool=<pool>][ description=sha256:<12 hex>]",
		}, ops(proxmoxsafe.OpCreateVM), (*proxmoxsafe.Client).CreateVM, func(in proxmoxsafe.CreateVMInput, r *proxmoxsafe.Receipt) string {
			return "creation of " + newGuestLabel(r) + " (" + clean(in.Name, 64) + ", " + strconv.Itoa(in.Cores) + " cores, " + strconv.Itoa(in.MemoryMiB) + " MiB)"
		}),
		mutationTool[createContainerArgs](ToolInfo{
			Name:  ToolContainerCreate,
			Title: "Create a container",
			Description: "Create one LXC container from an OS template (ostemplate, a vztmpl volume) with a hostname, CPU cores, memory, swap, a root disk (rootfs_storage, rootfs_size_gib), eth0 on a bridge with ip dhcp or a static IPv4/prefix and gateway, unprivileged unless privileged: true, and SSH public keys for root (ssh_public_keys). There is no password parameter: keys are the only way in it sets up. The VMID is vmid, or the next free one when omitted. The container is not started. " +
				"Refused (nothing is done) unless the operator enabled the provision class, allows the node and does not protect the VMID or the pool, and: the VMID is free, the node is online, the root disk storage exists on the node, is enabled, active and has content rootdir, and the template exists on the node. " +
				"Needs the approval phrase \"APPROVE create <node>/lxc/<vmid>\" followed by every parameter sent (ostemplate=, hostname=, cores=, memory=, swap=, rootfs=<storage>:<GiB>, net0=name=eth0,bridge=<bridge>,ip=<ip>[,gw=<gw>], unprivileged=<1|0>, then ssh-public-keys=sha256:<digest>, pool=, description=sha256:<digest> where set), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass vmid explicitly on the approving call. " +
				"Returns a receipt with the task UPID (vzcreate; the container is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the container exists, unlocked, and its configuration reads back as requested.",
			Class:          proxmoxsafe.ClassProvision,
			Annotations:    provisionAnnotations,
			ApprovalFormat: "APPROVE create <node>/lxc/<vmid> ostemplate=<volume> hostname=<name> cores=<n> memory=<MiB> swap=<MiB> rootfs=<storage>:<GiB> net0=name=eth0,bridge=<bridge>,ip=<ip>[,gw=<gw>] unprivileged=<1|0>[ ssh-public-keys=sha256:<12 hex>][ pool=<pool>][ description=sha256:<12 hex>]",
		}, ops(proxmoxsafe.OpCreateContainer), (*proxmoxsafe.Client).CreateContainer, func(in proxmoxsafe.CreateContainerInput, r *proxmoxsafe.Receipt) string {
			return "creation of " + newGuestLabel(r) + " (" + clean(in.Hostname, 64) + ")"
		}),
	}
}

// newGuestLabel names the guest a provision receipt creates.
func newGuestLabel(r *proxmoxsafe.Receipt) string {
	if r.NewGuest == nil {
		return guestLabel(r.Target, "")
	}
	return guestLabel(r.NewGuest.Target(), "")
}
