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
		does: "Restore a backup as a NEW VM or container, never over an existing guest; new MAC addresses unless keep_mac_addresses.",
	}).returning("new_guest")
}
