package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// backupDeleteTool declares the backup_delete tool.
func backupDeleteTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolBackupDelete,
		Title:       "Delete a backup",
		Annotations: destroyAnnotations,
	}, ops(proxmoxsafe.OpDeleteBackup), (*proxmoxsafe.Client).DeleteBackup, func(in proxmoxsafe.DeleteBackupInput, _ *proxmoxsafe.Receipt) string {
		return "deletion of backup " + clean(in.Volume, 255)
	}).describedBy(mutationWords{
		does:   "Delete one backup volume for good, with its notes and log.",
		unless: "neither the backup nor its guest is protected",
	}).returning("storage", "volid")
}
