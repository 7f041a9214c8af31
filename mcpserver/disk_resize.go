package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// diskResizeTool declares the disk_resize tool.
// disk_resize and guest_config_set are two tools: their preconditions,
// phrases and proofs differ.
func diskResizeTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolDiskResize,
		Title:       "Grow a disk",
		Annotations: snapshotAnnotations,
	}, ops(proxmoxsafe.OpResizeDisk), (*proxmoxsafe.Client).ResizeDisk, func(_ proxmoxsafe.ResizeDiskInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("resize of "+changesText(r.Changes), r)
	}).describedBy(mutationWords{
		does:    "Grow one disk of a guest: size +<n>[K|M|G|T] adds n, <n>[K|M|G|T] is the new total and must be larger than today's. Disks are never shrunk. Only the disk grows: partitions and file systems must be grown inside the guest.",
		unless:  "the guest is not locked and not a template, the disk exists (VM: scsi0…30, virtio0…15, sata0…5, ide0…3, efidisk0, tpmstate0; container: rootfs, mp0…255), has a size and is a storage volume (not a CD-ROM)",
		also:    "The request carries the digest of the config read, so Proxmox refuses it if the config changed meanwhile.",
		shows:   "the exact phrase, the current size and the new one",
		returns: "the task UPID (resize) and changes (the disk's size before and after)",
		waits:   "then until the config shows the new size",
	})
}
