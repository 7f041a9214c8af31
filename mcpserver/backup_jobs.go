package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// backupJobsTool declares the backup_jobs tool.
func backupJobsTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolBackupJobs,
		Title:       "Backup jobs",
		Description: "Scheduled backup jobs: schedule, next run, storage, mode, the guests selected, enabled, last result.",
	}, ops(proxmoxsafe.OpListBackupJobs), (*adapter).backupJobs, func() map[string]string {
		return map[string]string{
			"jobs": "last_result: ok, warnings, failed, running or not found (no run among the newest vzdump tasks; Proxmox's tasks do not name the job: a run is matched by selection, storage and mode).",
		}
	})
}

func (a *adapter) backupJobs(ctx context.Context, in proxmoxsafe.ListBackupJobsInput) (string, *proxmoxsafe.ListBackupJobsResult, error) {
	res, err := a.client.ListBackupJobs(ctx, in)
	if err != nil {
		return "", nil, err
	}
	failed := 0
	for _, j := range res.Jobs {
		if j.LastResult == "failed" {
			failed++
		}
	}
	return fmt.Sprintf("%d backup jobs, %d whose last run failed", len(res.Jobs), failed), res, nil
}
