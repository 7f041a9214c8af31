package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// cephStatusTool declares the ceph_status tool.
func cephStatusTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolCephStatus,
		Title:       "Ceph status",
		Description: "Ceph health, checks, monitors, OSDs, placement groups, usage; installed: false without Ceph.",
	}, ops(proxmoxsafe.OpCephStatus), (*adapter).cephStatus, func() map[string]string {
		return map[string]string{
			"installed": "False when Ceph is not installed or not initialized; message then says why and the other fields are empty.",
			"health":    "HEALTH_OK, HEALTH_WARN or HEALTH_ERR.",
			"checks":    "Active health checks, errors first, at most 50 (checks_total counts all).",
			"usage":     "Raw capacity in bytes.",
		}
	})
}

func (a *adapter) cephStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.CephStatusResult, error) {
	res, err := a.client.CephStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	if !res.Installed {
		return clean(res.Message, 256), res, nil
	}
	text := fmt.Sprintf("Ceph %s: %d/%d monitors in quorum, OSDs %d up / %d in of %d, %d PGs, %s of %s used",
		clean(res.Health, 32), len(res.Monitors.InQuorum), res.Monitors.Count, res.OSDs.Up, res.OSDs.In, res.OSDs.Total,
		res.PGs.Total, gib(res.Usage.Used), gib(res.Usage.Total))
	if res.ChecksTotal > 0 {
		var codes []string
		for _, c := range res.Checks[:min(len(res.Checks), 5)] {
			codes = append(codes, clean(c.Code, 64))
		}
		text += "; checks: " + strings.Join(codes, ", ")
	}
	return text, res, nil
}
