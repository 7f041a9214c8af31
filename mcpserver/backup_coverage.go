package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// backupCoverageTool declares the backup_coverage tool.
func backupCoverageTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolBackupCoverage,
		Title:       "Backup coverage",
		Description: "Per guest on allowed nodes: its newest backup, the jobs covering it, findings (too old, no enabled job, failed verification); also the backup jobs. Paged.",
	}, ops(proxmoxsafe.OpBackupCoverage), (*adapter).backupCoverage, func() map[string]string {
		return map[string]string{
			"guests":    "By vmid. A guest Proxmox hides backups of (privileges) looks unbacked.",
			"unchecked": "Guests on nodes outside the allowlist, not reported.",
		}
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
