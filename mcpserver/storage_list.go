package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// storageListTool declares the storage_list tool.
func storageListTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolStorageList,
		Title:       "List storage",
		Description: "Storages: type, content, shared, state, usage bytes.",
	}, ops(proxmoxsafe.OpListStorage), (*adapter).storageList, func() map[string]string {
		return map[string]string{
			"scope":    "node (read from the node) or cluster (every node, from the cluster resource list).",
			"storages": "One entry per storage and node, ordered by node then storage id. Sizes are bytes.",
			"total":    "Number of entries, including those beyond limit.",
		}
	})
}

func (a *adapter) storageList(ctx context.Context, in proxmoxsafe.ListStorageInput) (string, *proxmoxsafe.ListStorageResult, error) {
	res, err := a.client.ListStorage(ctx, in)
	if err != nil {
		return "", nil, err
	}
	inactive := 0
	for _, s := range res.Storages {
		if !s.Active {
			inactive++
		}
	}
	where := "cluster-wide"
	if res.Scope == "node" {
		where = "on " + in.Node
	}
	text := fmt.Sprintf("Listed %d of %d storage entries %s", len(res.Storages), res.Total, where)
	if inactive > 0 {
		text += fmt.Sprintf("; %d not active", inactive)
	}
	return text, res, nil
}
