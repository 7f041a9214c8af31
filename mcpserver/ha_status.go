package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// haStatusTool declares the ha_status tool.
func haStatusTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolHAStatus,
		Title:       "HA status",
		Description: "The HA manager: quorum, master, each node's LRM, each HA resource's state.",
	}, ops(proxmoxsafe.OpHAStatus), (*adapter).haStatus, func() map[string]string {
		return map[string]string{
			"in_use":   "False when HA was never configured.",
			"services": "HA resources ordered by sid, at most 1000 (total counts all).",
		}
	})
}

func (a *adapter) haStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.HAStatusResult, error) {
	res, err := a.client.HAStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	quorum := "quorate"
	if !res.Quorate {
		quorum = "NOT quorate"
	}
	if !res.InUse {
		return "HA is not in use (no HA resources); cluster " + quorum, res, nil
	}
	states := map[string]int{}
	for _, s := range res.Services {
		states[clean(s.State, 32)]++
	}
	var parts []string
	for _, st := range sortedKeysOf(states) {
		parts = append(parts, fmt.Sprintf("%d %s", states[st], st))
	}
	manager := "no active manager"
	if res.Manager.Node != "" {
		manager = "manager on " + clean(res.Manager.Node, 64)
	}
	return fmt.Sprintf("HA %s, %s; %d resources: %s", quorum, manager, res.Total, strings.Join(parts, ", ")), res, nil
}

func sortedKeysOf(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
