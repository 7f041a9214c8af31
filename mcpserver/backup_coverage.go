package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// backupCoverageTool declares the backup_coverage tool.
func backupCoverageTool() toolDef {
	return readTool(ToolInfo{
		Name:  ToolBackupCoverage,
		Title: "Backup coverage",
		Description: "For each guest on an allowlisted node: its newest backup (any backup storage the node lists), the backup jobs selecting it, and findings: no backup, newest older than max_age_days, not covered by an enabled job, verification failed. " +
			"Also the backup jobs (schedule, next run, storage, mode, selection resolved to guests, enabled). Paged by vmid like list_guests. Read-only.",
	}, ops(proxmoxsafe.OpBackupCoverage), (*adapter).backupCoverage, map[string]string{
		"guests":    "By vmid. A guest Proxmox hides backups of (privileges) looks unbacked.",
		"unchecked": "Guests on nodes outside the allowlist, not reported.",
	})
}

func (a *adapter) backupCoverage(ctx context.Context, in proxmoxsafe.BackupCoverageInput) (string, *proxmoxsafe.BackupCoverageResult, error) {
	res, err := a.client.BackupCoverage(ctx, in)
	if err != nil {
		return "", nil, err
	}
	bad := 0
	for _, g := range res.Guests {
		if len(g.Findings) > 0 {
			bad++
		}
	}
	return fmt.Sprintf("Backup coverage of %d of %d guests: %d with findings; %d backup jobs", len(res.Guests), res.Total, bad, len(res.Jobs)), res, nil
}
