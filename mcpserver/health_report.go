package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// healthReportTool declares the health_report tool.
func healthReportTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolHealthReport,
		Title:       "Health report",
		Description: "Findings for the cluster or one node, worst first, with evidence and the tool to use: nodes, quorum, Ceph, HA, replication, ZFS, disks, services, storage, updates, backups, snapshots.",
	}, ops(proxmoxsafe.OpHealthReport), (*adapter).healthReport, func() map[string]string {
		return map[string]string{
			"findings": "Most severe first; total counts all.",
		}
	})
}

func (a *adapter) healthReport(ctx context.Context, in proxmoxsafe.HealthReportInput) (string, *proxmoxsafe.HealthReportResult, error) {
	res, err := a.client.HealthReport(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := fmt.Sprintf("Health of %s: %d critical, %d warning, %d info", res.Scope, res.Critical, res.Warning, res.Info)
	if len(res.Findings) < res.Total {
		text += fmt.Sprintf(" (%d of %d shown)", len(res.Findings), res.Total)
	}
	if len(res.Findings) > 0 && res.Findings[0].Severity != proxmoxsafe.SeverityInfo {
		f := res.Findings[0]
		text += fmt.Sprintf("; first: %s %s", clean(f.Kind, 32), clean(f.Subject, 96))
	}
	return text, res, nil
}
