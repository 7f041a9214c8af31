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
		does:    "Create one QEMU VM, stopped: cores, sockets, memory, one SCSI disk, one NIC, optionally an install ISO; no password or cloud-init secret. vmid defaults to the next free one.",
		unless:  "the VMID (free) and pool are not protected, the node is online, disk_storage holds images and the ISO exists",
		phrase:  "pass vmid explicitly",
		returns: "new_guest",
	}).returning("new_guest")
}
