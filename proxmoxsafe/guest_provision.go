package proxmoxsafe

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// The "provision" class brings guests into being: a clone of a guest, a
// new QEMU VM, a new LXC container. Inputs are typed fields only (no raw
// key/value map of Proxmox options), each checked against Proxmox's own
// format before any request, and none of them takes a secret: there is no
// root password for containers and no cloud-init password for VMs; a
// container gets SSH public keys. Every parameter that changes what is
// created is part of the approval phrase (free text by a digest, see
// [TextDigest]).

// Proxmox's formats the provision inputs use (pve-common JSONSchema.pm,
// qemu-server, pve-container), in the form the validators and the MCP
// schemas share.
const (
	// DNSNamePattern is Proxmox's dns-name: dot-separated labels of
	// letters, digits and '-', no label starting or ending with '-'. Guest
	// names (QEMU name, container hostname) use it; at most [MaxDNSNameLen].
	DNSNamePattern = `^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`
	// PoolIDPattern is pve-poolid for a top-level pool (nested pools,
	// "a/b", are not offered), at most [MaxPoolIDLen].
	PoolIDPattern = `^[A-Za-z0-9._-]+$`
	// BridgePattern is pve-bridge-id ([-_.\w\d]+) capped at Linux's 15
	// characters of an interface name.
	BridgePattern = `^[A-Za-z0-9_.-]{1,15}$`
	// ISOVolumePattern is a volume id of an ISO image
	// (storage:iso/<file>.iso|.img, pve-storage's iso volume names).
	ISOVolumePattern = `^[A-Za-z][A-Za-z0-9._-]*[A-Za-z0-9]:iso/[A-Za-z0-9_][A-Za-z0-9._+-]*\.(iso|img)$`
	// TemplateVolumePattern is a volume id of a container template
	// (storage:vztmpl/<file>.tar.{gz,xz,zst,bz2}), at most [MaxVolumeIDLen].
	TemplateVolumePattern = `^[A-Za-z][A-Za-z0-9._-]*[A-Za-z0-9]:vztmpl/[A-Za-z0-9_][A-Za-z0-9._+-]*\.tar\.(gz|xz|zst|bz2)$`
	// ContainerIPPattern is a container's IPv4 setting: "dhcp" or an
	// address with its prefix length (CIDR).
	ContainerIPPattern = `^(dhcp|` + ipv4Octets + `/([0-9]|[12][0-9]|3[0-2]))$`
	// GatewayPattern is an IPv4 address (the container's gateway).
	GatewayPattern = `^` + ipv4Octets + `$`
	ipv4Octet      = `(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	ipv4Octets     = ipv4Octet + `\.` + ipv4Octet + `\.` + ipv4Octet + `\.` + ipv4Octet
)

// Limits of the provision inputs (validate max=… tags name these).
const (
	MaxDNSNameLen = 253
	MaxPoolIDLen  = 64
	// MaxVolumeIDLen is the ostemplate's maxLength in the container schema.
	MaxVolumeIDLen = 255
	// MaxGuestDescriptionLen is the guest description's maxLength (8192).
	MaxGuestDescriptionLen = 8192
	// MaxSSHKeysLen caps the SSH public keys of a container.
	MaxSSHKeysLen = 16384
	// MaxProvisionApprovalLen caps the approval text of the provision
	// inputs: their phrases name every parameter, so they are longer than
	// [MaxApprovalLen].
	MaxProvisionApprovalLen = 1024
	// MaxCores is the container schema's maximum (QEMU's has none; the
	// same cap applies).
	MaxCores = 8192
	// MaxSockets caps a VM's sockets (Proxmox sets no maximum).
	MaxSockets = 64
	// MinMemoryMiB is Proxmox's minimum memory (QEMU and LXC); MaxMemoryMiB
	// (4 TiB) and MaxSwapMiB are caps of this package.
	MinMemoryMiB = 16
	MaxMemoryMiB = 4194304
	MaxSwapMiB   = 4194304
	// MaxDiskGiB caps a new disk (64 TiB).
	MaxDiskGiB = 65536
)

// NewGuest is the guest a provision operation creates, and what its
// configuration must read back for the creation to count as done.
type NewGuest struct {
	Node string    `json:"node"`
	Type GuestType `json:"type"`
	VMID int       `json:"vmid"`
	// Config maps configuration keys the request set to the values sent
	// (disks as "storage:size", networks as Proxmox's property string). A
	// disk counts as read back when it is on that storage with that size
	// in GiB, a network when every property sent is there.
	Config map[string]string `json:"config,omitempty"`
	// Pool is the resource pool the guest must be in ("" for none).
	Pool string `json:"pool,omitempty"`
	// Archive is, for a restore, the configuration the backup holds, key
	// by key as the restored guest must read it back: a [TextDigest] of
	// the value, or "present" for a key whose value may hold a secret.
	// What a restore changes by design is left out (a disk's volume, with
	// Unique the MAC addresses, …: docs/ARCHITECTURE.md, Backups).
	Archive map[string]string `json:"archive_config,omitempty"`
	// Unique is, for a restore, whether it gives new MAC addresses.
	Unique bool `json:"unique,omitempty"`
}

// Target returns the new guest as a target.
func (g NewGuest) Target() Target { return Target{Node: g.Node, Type: g.Type, VMID: g.VMID} }

// String names the new guest as approval phrases do: "pve1/qemu/123".
func (g NewGuest) String() string { return g.Target().String() }

// TextDigest is how free text (a description, SSH public keys) appears in
// an approval phrase: "sha256:" and the first 12 hex digits of its
// SHA-256. The phrase stays short and printable, and an approval given for
// one text is refused for another.
func TextDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// CloneGuestInput names the guest [Client.CloneGuest] copies and how.
type CloneGuestInput struct {
	GuestRef
	// NewID is the clone's VMID; 0 asks Proxmox for the next free one
	// (/cluster/nextid), which the refusal and the plan then name.
	NewID int `json:"newid,omitempty" validate:"omitempty,pve_vmid"`
	// Linked makes a linked clone (shares the template's base disks;
	// only from a template, and without Storage). false makes a full,
	// independent copy. Either way full=0/1 is sent and is in the phrase.
	Linked bool `json:"linked,omitempty"`
	// TargetNode is the node the clone ends up on; "" or the source's node
	// keeps it there. Another node needs every source disk on shared
	// storage (Proxmox refuses otherwise).
	TargetNode string `json:"target,omitempty" validate:"omitempty,pve_node"`
	// Storage is where a full clone's disks go; "" keeps each disk's
	// storage. Not allowed for a linked clone.
	Storage string `json:"storage,omitempty" validate:"omitempty,pve_storage" jsonschema:"For a full clone; default each disk's own."`
	// Name is the clone's name (QEMU) or hostname (LXC), a dns-name.
	Name string `json:"name,omitempty" validate:"omitempty,max=253,pve_dnsname"`
	// Pool is the resource pool the clone joins; "" for none.
	Pool string `json:"pool,omitempty" validate:"omitempty,max=64,pve_poolid"`
	// Description is the clone's description (free text; in the phrase
	// by its [TextDigest]).
	Description string `json:"description,omitempty" validate:"omitempty,max=8192,pve_text"`
	Controls
}

// Target returns the source guest.
func (in CloneGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// targetNode is the node the clone ends up on ("" when it stays).
func (in CloneGuestInput) targetNode() string {
	if in.TargetNode == in.Node {
		return ""
	}
	return in.TargetNode
}

// nameKey is Proxmox's parameter for the clone's name.
func (in CloneGuestInput) nameKey() string {
	if in.Type == TypeLXC {
		return "hostname"
	}
	return "name"
}

// approvalParams are the clone's parameters in phrase order, the
// description by its digest. newid is the resolved VMID (NewID or the
// next free one).
func (in CloneGuestInput) approvalParams(newid int) []ApprovalParam {
	return phraseParams(in.requestParams(newid))
}

// requestParams are the clone request's parameters as sent: full is
// always explicit, so that the kind of clone never depends on whether the
// source is a template.
func (in CloneGuestInput) requestParams(newid int) []ApprovalParam {
	ps := []ApprovalParam{{Name: "newid", Value: strconv.Itoa(newid)}, {Name: "full", Value: boolParam(!in.Linked)}}
	add := func(name, v string) {
		if v != "" {
			ps = append(ps, ApprovalParam{Name: name, Value: v})
		}
	}
	add("target", in.targetNode())
	add("storage", in.Storage)
	add(in.nameKey(), in.Name)
	add("pool", in.Pool)
	add("description", in.Description)
	return ps
}

// ApprovalPhrase returns the phrase that approves this input for the clone
// VMID newid (in.NewID when it is set).
func (in CloneGuestInput) ApprovalPhrase(newid int) string {
	if in.NewID != 0 {
		newid = in.NewID
	}
	return ApprovalPhrase("clone", in.Target(), in.approvalParams(newid)...)
}

// CreateVMInput describes the QEMU VM [Client.CreateVM] creates: CPUs,
// memory, one disk, one network device and optionally an ISO image in a
// CD-ROM drive. Zero values of the optional fields mean the documented
// defaults, which are sent explicitly (and so are in the phrase).
type CreateVMInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	// VMID is the new VM's id; 0 takes the next free one (/cluster/nextid).
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Name is the VM's name, a dns-name.
	Name string `json:"name" validate:"required,max=253,pve_dnsname"`
	// Cores per socket, 1 to [MaxCores].
	Cores int `json:"cores" validate:"required,min=1,max=8192" jsonschema:"Per socket."`
	// Sockets, 1 to [MaxSockets]; 0 means 1.
	Sockets int `json:"sockets,omitempty" validate:"omitempty,min=1,max=64"`
	// MemoryMiB is the VM's memory in MiB, [MinMemoryMiB] to [MaxMemoryMiB].
	MemoryMiB int `json:"memory" validate:"required,min=16,max=4194304" jsonschema:"MiB."`
	// OSType is Proxmox's ostype; "" means "l26" (Linux 2.6 to 6.x).
	OSType string `json:"ostype,omitempty" validate:"omitempty,oneof=other wxp w2k w2k3 w2k8 wvista win7 win8 win10 win11 l24 l26 solaris"`
	// DiskStorage and DiskSizeGiB make the VM's one disk (scsi0, on a
	// virtio-scsi-single controller); the storage needs content "images".
	DiskStorage string `json:"disk_storage" validate:"required,pve_storage"`
	DiskSizeGiB int    `json:"disk_size_gib" validate:"required,min=1,max=65536"`
	// Bridge and NetModel make the VM's one network device (net0).
	Bridge string `json:"bridge" validate:"required,pve_bridge"`
	// NetModel is the NIC model; "" means virtio.
	NetModel string `json:"net_model,omitempty" validate:"omitempty,oneof=virtio e1000 e1000e rtl8139 vmxnet3"`
	// ISO, when set, is an ISO image volume (storage:iso/file.iso) put in
	// a CD-ROM drive (ide2) to install from; it must exist on the node.
	ISO string `json:"iso,omitempty" validate:"omitempty,max=255,pve_isovolume" jsonschema:"e.g. local:iso/x.iso."`
	// Pool is the resource pool the VM joins; "" for none.
	Pool string `json:"pool,omitempty" validate:"omitempty,max=64,pve_poolid"`
	// Description is free text (in the phrase by its [TextDigest]).
	Description string `json:"description,omitempty" validate:"omitempty,max=8192,pve_text"`
	Controls
}

// form returns the request parameters of the create, in a fixed order
// (the phrase's), for the VMID vmid.
func (in CreateVMInput) params(vmid int) []ApprovalParam {
	sockets, ostype, model := in.Sockets, in.OSType, in.NetModel
	if sockets == 0 {
		sockets = 1
	}
	if ostype == "" {
		ostype = "l26"
	}
	if model == "" {
		model = "virtio"
	}
	ps := []ApprovalParam{
		{Name: "vmid", Value: strconv.Itoa(vmid)},
		{Name: "name", Value: in.Name},
		{Name: "cores", Value: strconv.Itoa(in.Cores)},
		{Name: "sockets", Value: strconv.Itoa(sockets)},
		{Name: "memory", Value: strconv.Itoa(in.MemoryMiB)},
		{Name: "ostype", Value: ostype},
		{Name: "scsihw", Value: "virtio-scsi-single"},
		{Name: "scsi0", Value: in.DiskStorage + ":" + strconv.Itoa(in.DiskSizeGiB)},
		{Name: "net0", Value: model + ",bridge=" + in.Bridge},
	}
	if in.ISO != "" {
		ps = append(ps, ApprovalParam{Name: "ide2", Value: in.ISO + ",media=cdrom"})
	}
	if in.Pool != "" {
		ps = append(ps, ApprovalParam{Name: "pool", Value: in.Pool})
	}
	if in.Description != "" {
		ps = append(ps, ApprovalParam{Name: "description", Value: in.Description})
	}
	return ps
}

// ApprovalPhrase returns the phrase that approves this input for the VMID
// vmid (in.VMID when it is set).
func (in CreateVMInput) ApprovalPhrase(vmid int) string {
	if in.VMID != 0 {
		vmid = in.VMID
	}
	return ApprovalPhrase("create", Target{Node: in.Node, Type: TypeQEMU, VMID: vmid}, phraseParams(in.params(vmid))...)
}

// CreateContainerInput describes the LXC container [Client.CreateContainer]
// creates from an OS template: CPUs, memory, swap, a root disk, one
// network interface and SSH public keys for root. There is no password.
type CreateContainerInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	// VMID is the new container's id; 0 takes the next free one.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// OSTemplate is the template volume (storage:vztmpl/file.tar.zst); it
	// must exist on the node.
	OSTemplate string `json:"ostemplate" validate:"required,max=255,pve_tmplvolume" jsonschema:"e.g. local:vztmpl/debian-12.tar.zst."`
	// Hostname is the container's hostname, a dns-name.
	Hostname string `json:"hostname" validate:"required,max=253,pve_dnsname"`
	// Cores, 1 to [MaxCores].
	Cores int `json:"cores" validate:"required,min=1,max=8192"`
	// MemoryMiB, [MinMemoryMiB] to [MaxMemoryMiB].
	MemoryMiB int `json:"memory" validate:"required,min=16,max=4194304" jsonschema:"MiB."`
	// SwapMiB is the swap in MiB; 0 means none.
	SwapMiB int `json:"swap,omitempty" validate:"min=0,max=4194304" jsonschema:"MiB, default 0."`
	// RootfsStorage and RootfsSizeGiB make the root disk; the storage
	// needs content "rootdir".
	RootfsStorage string `json:"rootfs_storage" validate:"required,pve_storage"`
	RootfsSizeGiB int    `json:"rootfs_size_gib" validate:"required,min=1,max=65536"`
	// Bridge is where eth0 attaches.
	Bridge string `json:"bridge" validate:"required,pve_bridge"`
	// IP is "dhcp" or an IPv4 address with prefix length (10.0.0.5/24).
	IP string `json:"ip" validate:"required,pve_ctip" jsonschema:"dhcp or IPv4/prefix, e.g. 192.0.2.10/24."`
	// Gateway is the IPv4 gateway; only with a static IP.
	Gateway string `json:"gateway,omitempty" validate:"omitempty,pve_ipv4" jsonschema:"Only with a static ip."`
	// Privileged creates a privileged container. The default (false)
	// creates an unprivileged one (unprivileged=1 is sent), which is what
	// Proxmox recommends; a privileged one needs Sys.Modify on "/".
	Privileged bool `json:"privileged,omitempty" jsonschema:"Root in the container is root on the host."`
	// SSHPublicKeys are OpenSSH public keys for root, one per line. They
	// are the only way in that this operation sets up: it takes no
	// password.
	SSHPublicKeys string `json:"ssh_public_keys,omitempty" validate:"omitempty,max=16384,pve_sshkeys" jsonschema:"Root's, one per line."`
	// Pool is the resource pool the container joins; "" for none.
	Pool string `json:"pool,omitempty" validate:"omitempty,max=64,pve_poolid"`
	// Description is free text (in the phrase by its [TextDigest]).
	Description string `json:"description,omitempty" validate:"omitempty,max=8192,pve_text"`
	Controls
}

// params returns the request parameters of the create in phrase order.
func (in CreateContainerInput) params(vmid int) []ApprovalParam {
	net := "name=eth0,bridge=" + in.Bridge + ",ip=" + in.IP
	if in.Gateway != "" {
		net += ",gw=" + in.Gateway
	}
	ps := []ApprovalParam{
		{Name: "vmid", Value: strconv.Itoa(vmid)},
		{Name: "ostemplate", Value: in.OSTemplate},
		{Name: "hostname", Value: in.Hostname},
		{Name: "cores", Value: strconv.Itoa(in.Cores)},
		{Name: "memory", Value: strconv.Itoa(in.MemoryMiB)},
		{Name: "swap", Value: strconv.Itoa(in.SwapMiB)},
		{Name: "rootfs", Value: in.RootfsStorage + ":" + strconv.Itoa(in.RootfsSizeGiB)},
		{Name: "net0", Value: net},
		{Name: "unprivileged", Value: boolParam(!in.Privileged)},
	}
	if in.SSHPublicKeys != "" {
		ps = append(ps, ApprovalParam{Name: "ssh-public-keys", Value: in.SSHPublicKeys})
	}
	if in.Pool != "" {
		ps = append(ps, ApprovalParam{Name: "pool", Value: in.Pool})
	}
	if in.Description != "" {
		ps = append(ps, ApprovalParam{Name: "description", Value: in.Description})
	}
	return ps
}

// ApprovalPhrase returns the phrase that approves this input for the VMID
// vmid (in.VMID when it is set).
func (in CreateContainerInput) ApprovalPhrase(vmid int) string {
	if in.VMID != 0 {
		vmid = in.VMID
	}
	return ApprovalPhrase("create", Target{Node: in.Node, Type: TypeLXC, VMID: vmid}, phraseParams(in.params(vmid))...)
}

// freeTextParams are sent as given but named by a digest in phrases.
var freeTextParams = map[string]bool{"description": true, "ssh-public-keys": true}

// phraseParams turns request parameters into approval parameters: the
// VMID is in the target, free text is named by its digest.
func phraseParams(ps []ApprovalParam) []ApprovalParam {
	out := make([]ApprovalParam, 0, len(ps))
	for _, p := range ps {
		switch {
		case p.Name == "vmid":
			continue
		case freeTextParams[p.Name]:
			p.Value = TextDigest(p.Value)
		}
		out = append(out, p)
	}
	return out
}

func boolParam(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// approvalLimit: the provision phrases name every parameter.
func (CloneGuestInput) approvalLimit() int { return MaxProvisionApprovalLen }

func (CreateVMInput) approvalLimit() int { return MaxProvisionApprovalLen }

func (CreateContainerInput) approvalLimit() int { return MaxProvisionApprovalLen }
