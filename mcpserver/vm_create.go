package mcpserver

import (
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// vmCreateTool declares the vm_create tool.
func vmCreateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolVMCreate,
		Title: "Create a VM",
		Description: "Create one QEMU VM with CPU cores (and sockets), memory, one disk (disk_storage, disk_size_gib; SCSI on virtio-scsi-single), one network device (bridge, net_model) and optionally an ISO image in a CD-ROM drive to install from. No password or cloud-init secret is accepted. The VMID is vmid, or the next free one when omitted. The VM is not started. " +
			"Refused (nothing is done) unless the operator enabled the provision class, allows the node and does not protect the VMID or the pool, and: the VMID is free, the node is online, the disk storage exists on the node, is enabled, active and has content images, and the ISO image exists on the node. " +
			"Needs the approval phrase \"APPROVE create <node>/qemu/<vmid>\" followed by every parameter sent (name=, cores=, sockets=, memory=, ostype=, scsihw=, scsi0=<storage>:<GiB>, net0=<model>,bridge=<bridge>, then ide2=, pool=, description=sha256:<digest> where set), exactly as the refusal or a plan: true call states it, unless the operator set another approval level. Pass vmid explicitly on the approving call. " +
			"Returns a receipt with the task UPID (qmcreate; the VM is locked while it runs) and new_guest; with wait: true it waits (timeout_seconds) until the VM exists, unlocked, and its configuration reads back as requested.",
		Class:       proxmoxsafe.ClassProvision,
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCreateVM), (*proxmoxsafe.Client).CreateVM, func(in proxmoxsafe.CreateVMInput, r *proxmoxsafe.Receipt) string {
		return "creation of " + newGuestLabel(r) + " (" + clean(in.Name, 64) + ", " + strconv.Itoa(in.Cores) + " cores, " + strconv.Itoa(in.MemoryMiB) + " MiB)"
	}).approvalShowing("the exact phrase with every parameter it covers")
}
