package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// clusterStatusTool declares the cluster_status tool.
func clusterStatusTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolClusterStatus,
		Title:       "Cluster status",
		Description: "Cluster name, quorum, version; each node online or not, with CPU, memory, disk, uptime.",
	}, ops(proxmoxsafe.OpClusterStatus), (*adapter).clusterStatus, func() map[string]string {
		return map[string]string{
			"name":      "Cluster name; empty for a standalone node.",
			"clustered": "False for a standalone node.",
			"quorate":   "True when the cluster has quorum (a standalone node always has).",
			"version":   "Proxmox VE version of the node that answered.",
			"nodes":     "Every cluster member, ordered by name, with usage (absent for offline nodes) and problem (why usage is missing).",
			"warnings":  "What could not be read (e.g. usage after a 595/596 forwarding error); the rest of the result is valid.",
		}
	})
}

func (a *adapter) clusterStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.ClusterStatusResult, error) {
	res, err := a.client.ClusterStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	online := 0
	for _, n := range res.Nodes {
		if n.Online {
			online++
		}
	}
	var b strings.Builder
	if res.Clustered {
		fmt.Fprintf(&b, "Cluster %s: %d nodes (%d online), ", clean(res.Name, 64), len(res.Nodes), online)
		if res.Quorate {
			b.WriteString("quorate")
		} else {
			b.WriteString("NOT quorate")
		}
	} else {
		name := ""
		if len(res.Nodes) > 0 {
			name = " " + clean(res.Nodes[0].Name, 64)
		}
		fmt.Fprintf(&b, "Standalone node%s", name)
	}
	if res.Version != "" {
		fmt.Fprintf(&b, ", PVE %s", clean(res.Version, 64))
	}
	for _, n := range res.Nodes {
		if n.Problem != "" {
			fmt.Fprintf(&b, "; %s: %s", clean(n.Name, 64), clean(n.Problem, 256))
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintf(&b, "; warning: %s", clean(res.Warnings[0], 512))
	}
	return b.String(), res, nil
}
