package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// snapshotCleanupTool declares the snapshot_cleanup tool.
func snapshotCleanupTool() toolDef {
	return toolDef{
		info: ToolInfo{
			Name:        ToolSnapshotCleanup,
			Title:       "Snapshot cleanup (retention policy)",
			Annotations: cleanupAnnotations,
		},
		ops:                ops(proxmoxsafe.OpCleanupSnapshots),
		schemas:            schemasFor[proxmoxsafe.CleanupSnapshotsInput, *proxmoxsafe.CleanupResult],
		input:              reflect.TypeFor[proxmoxsafe.CleanupSnapshotsInput](),
		register:           typedPartial(mutating((*adapter).snapshotCleanup)),
		outputDescriptions: cleanupDescriptions,
		words: &mutationWords{
			does:    "Apply the operator's snapshot retention to one guest; a dry run unless apply: true. Never deletes one with \"keep\" in its name or description; deletes those past the maximum age, then the oldest beyond the maximum count (automatic ones last), stopping at a failure.",
			when:    "only with apply",
			returns: "none",
		},
	}
}

func cleanupDescriptions() map[string]string {
	return map[string]string{
		"target":  "The guest (node, type, vmid).",
		"applied": "False for a dry run: nothing was changed.",
		"plan":    "The retention plan from the fresh snapshot list: delete (in execution order) and keep, each with the rule and the reason, and the effective policy.",
		"steps":   "One per planned deletion, in order: status planned (dry run), deleted, failed, unknown (the task had not ended when the wait did), skipped (vanished or newly keep-marked) or not_attempted (after a failure); upid of its task.",
		"deleted": "Snapshots deleted by this call.",
		"message": "The result in one sentence.",
	}
}

func (a *adapter) snapshotCleanup(ctx context.Context, in proxmoxsafe.CleanupSnapshotsInput) (string, *proxmoxsafe.CleanupResult, error) {
	res, err := a.client.CleanupSnapshots(ctx, in)
	if res == nil {
		return "", nil, err
	}
	var b strings.Builder
	b.WriteString(clean(res.Message, 512))
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "\n- %s: %s (%s)", clean(s.Name, 64), s.Status, s.Rule)
		if s.Detail != "" {
			fmt.Fprintf(&b, ": %s", clean(s.Detail, 256))
		}
	}
	return b.String(), res, err
}
