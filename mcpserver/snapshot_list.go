package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// snapshotListTool declares the snapshot_list tool.
func snapshotListTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolSnapshotList,
		Title:       "Snapshot list",
		Description: "One guest's snapshots as a tree, with current; keep: never deleted automatically; cleanup: what snapshot_cleanup would do.",
	}, ops(proxmoxsafe.OpListSnapshots), (*adapter).snapshotList, func() map[string]string {
		return map[string]string{
			"snapshots": "Depth-first walk of the snapshot tree, siblings oldest first; at most 500. age_seconds is the age by this server's clock; cleanup is the operator's retention policy's verdict (would_delete, rule, reason).",
			"total":     "Number of snapshots the guest has.",
			"current":   "The snapshot the guest's current state is based on (a rollback target or the newest); absent without snapshots.",
			"running":   "The guest's power state as the snapshot list reports it.",
		}
	})
}

func (a *adapter) snapshotList(ctx context.Context, in proxmoxsafe.ListSnapshotsInput) (string, *proxmoxsafe.ListSnapshotsResult, error) {
	t := in.Target()
	res, err := a.client.ListSnapshots(ctx, in)
	if err != nil {
		return "", nil, err
	}
	label := guestLabel(t, "")
	var text string
	switch {
	case res.Total == 0:
		text = label + " has no snapshots"
	case len(res.Snapshots) < res.Total:
		text = fmt.Sprintf("%s has %d snapshots (first %d listed); current state is based on %s", label, res.Total, len(res.Snapshots), clean(res.Current, 64))
	default:
		text = fmt.Sprintf("%s has %d snapshots; current state is based on %s", label, res.Total, orNone(clean(res.Current, 64)))
	}
	return text, res, nil
}
