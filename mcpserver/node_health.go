package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// nodeHealthTool declares the node_health tool.
func nodeHealthTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolNodeHealth,
		Title:       "Node health",
		Description: "One node's pending updates, services, disks (SMART, wear-out), ZFS pools, replication jobs.",
	}, ops(proxmoxsafe.OpNodeHealth), (*adapter).nodeHealth, func() map[string]string {
		return map[string]string{
			"reachable": "False when Proxmox could not reach the node.",
			"updates":   "Pending updates (count; at most 50 packages). Needs Sys.Modify on the node.",
			"disks":     "wearout: remaining life in percent, absent when Proxmox says N/A.",
		}
	})
}

func (a *adapter) nodeHealth(ctx context.Context, in proxmoxsafe.NodeHealthInput) (string, *proxmoxsafe.NodeHealthResult, error) {
	res, err := a.client.NodeHealth(ctx, in)
	if err != nil {
		return "", nil, err
	}
	if !res.Reachable {
		return fmt.Sprintf("Node %s is offline or unreachable: nothing could be read", res.Node), res, nil
	}
	var parts []string
	part := func(name string, p proxmoxsafe.HealthPart, ok string) {
		if p.Status != proxmoxsafe.PartOK {
			ok = p.Status
		}
		parts = append(parts, name+" "+ok)
	}
	part("updates", res.Updates.HealthPart, fmt.Sprintf("%d pending", res.Updates.Count))
	part("services", res.Services.HealthPart, fmt.Sprintf("%d, %d failed", res.Services.Total, len(res.Services.Failed)))
	failing := 0
	for _, d := range res.Disks.Disks {
		if d.Failing {
			failing++
		}
	}
	part("disks", res.Disks.HealthPart, fmt.Sprintf("%d, %d failing SMART", res.Disks.Total, failing))
	notOnline := 0
	for _, p := range res.ZFS.Pools {
		if p.State != "ONLINE" {
			notOnline++
		}
	}
	part("ZFS pools", res.ZFS.HealthPart, fmt.Sprintf("%d, %d not online", res.ZFS.Total, notOnline))
	failed := 0
	for _, j := range res.Replication.Jobs {
		if j.FailCount > 0 || j.Error != "" {
			failed++
		}
	}
	part("replication jobs", res.Replication.HealthPart, fmt.Sprintf("%d, %d failing", res.Replication.Total, failed))
	return fmt.Sprintf("Node %s: %s", res.Node, strings.Join(parts, "; ")), res, nil
}
