package mcpserver

import (
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// vmCreateTool declares the vm_create tool.
func vmCreateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolVMCreate,
		Title:       "Create a VM",
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpCreateVM), (*proxmoxsafe.Client).CreateVM, func(in proxmoxsafe.CreateVMInput, r *proxmoxsafe.Receipt) string {
		return "creation of " + newGuestLabel(r) + " (" + clean(in.Name, 64) + ", " + strconv.Itoa(in.Cores) + " cores, " + strconv.Itoa(in.MemoryMiB) + " MiB)"
	}).describedBy(mutationWords{
		does:    "Create one QEMU VM with CPU cores (and sockets), memory, one disk (disk_storage, disk_size_gib; SCSI on virtio-scsi-single), one network device (bridge, net_model) and optionally an ISO image in a CD-ROM drive to install from. No password or cloud-init secret is accepted. The VMID is vmid, or the next free one when omitted. The VM is not started.",
		allows:  "allows the node and does not protect the VMID or the pool",
		unless:  "the VMID is free, the node is online, the disk storage exists on the node, is enabled, active and has content images, and the ISO image exists on the node",
		phrase:  "exactly as the refusal or a plan: true call states it; pass vmid explicitly on the approving call",
		shows:   "the exact phrase with every parameter it covers",
		returns: "the task UPID (qmcreate; the VM is locked while it runs) and new_guest",
		waits:   "then until the VM exists, unlocked, and its configuration reads back as requested",
	})
}
