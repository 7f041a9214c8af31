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
		does:    "Restore a backup (see backup_list) as a NEW VM or container: never over an existing guest, never started, new MAC addresses unless keep_mac_addresses. The VMID is vmid, or the next free one when omitted.",
		allows:  "allows the node and does not protect the new VMID",
		unless:  "the VMID is free, the node online, the backup listed by the node, and storage (if given) exists there, enabled, active, with content images (VM) or rootdir (container)",
		phrase:  "pass vmid explicitly on the approving call",
		returns: "the task UPID (qmrestore or vzrestore; the new guest is locked while it runs) and new_guest",
		waits:   "then until the new guest exists, unlocked",
		after:   "Start it with guest_power.",
	})
}
