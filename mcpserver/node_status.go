package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// nodeStatusTool declares the node_status tool.
func nodeStatusTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolNodeStatus,
		Title:       "Node status",
		Description: "One node's uptime, CPU, load, memory, swap, root disk, kernel, PVE version.",
	}, ops(proxmoxsafe.OpNodeStatus), (*adapter).nodeStatus, func() map[string]string {
		return map[string]string{
			"node":        "The node reported on.",
			"cpus":        "Number of logical CPUs.",
			"cpu_model":   "CPU model name.",
			"kernel":      "Running kernel release.",
			"pve_version": "The node's pve-manager version.",
			"uptime":      "Seconds since boot.",
			"cpu":         "CPU usage as a fraction of all cores (0 to 1).",
			"loadavg":     "1, 5 and 15 minute load averages.",
			"memory":      "Bytes.",
			"swap":        "Bytes.",
			"rootfs":      "Bytes.",
		}
	})
}

func (a *adapter) nodeStatus(ctx context.Context, in proxmoxsafe.NodeStatusInput) (string, *proxmoxsafe.NodeStatusResult, error) {
	res, err := a.client.NodeStatus(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := fmt.Sprintf("Node %s: up %s, CPU %.0f%% of %d, load %.2f %.2f %.2f, memory %s of %s, root fs %s of %s",
		res.Node, duration(res.Uptime), res.CPU*100, res.CPUs,
		res.LoadAvg[0], res.LoadAvg[1], res.LoadAvg[2],
		gib(res.Memory.Used), gib(res.Memory.Total), gib(res.RootFS.Used), gib(res.RootFS.Total))
	if res.PVEVersion != "" {
		text += ", " + clean(res.PVEVersion, 64)
	}
	return text, res, nil
}
