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
		does: "Create one QEMU VM with one SCSI disk, one NIC, optionally an install ISO; no password or cloud-init.",
	}).returning("new_guest")
}
