package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// backupRestoreTool declares the backup_restore tool.
func backupRestoreTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolBackupRestore,
		Title:       "Restore a backup to a new guest",
		Annotations: provisionAnnotations,
	}, ops(proxmoxsafe.OpRestoreBackup), (*proxmoxsafe.Client).RestoreBackup, func(in proxmoxsafe.RestoreBackupInput, r *proxmoxsafe.Receipt) string {
		return "restore of " + clean(in.Archive, 255) + " as " + newGuestLabel(r)
	}).describedBy(mutationWords{
		does:    "Restore a backup (see backup_list) as a NEW, stopped VM or container, never over an existing guest; new MAC addresses unless keep_mac_addresses. vmid defaults to the next free one.",
		unless:  "the new VMID is not protected and free, the node online, the backup listed there, and storage (if given) usable for images or rootdir",
		phrase:  "pass vmid explicitly",
		returns: "new_guest",
	}).returning("new_guest")
}
