package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// backupCreateTool declares the backup_create tool.
func backupCreateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolBackupCreate,
		Title: "Back up a guest",
		// mode stop shuts a running guest down, like guest_power's stop.
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpBackupGuest), (*proxmoxsafe.Client).BackupGuest, func(_ proxmoxsafe.BackupGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("backup", r)
	}).describedBy(mutationWords{
		does: "Back up one guest with vzdump. mode: snapshot (default; keeps running), suspend (paused meanwhile), stop (shut down, then started again). Older backups are never pruned.",
	}).returning("storage", "volid")
}
