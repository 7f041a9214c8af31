package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// snapshot_list says, per snapshot, what snapshot_cleanup would do.
func TestSnapshotListCleanupVerdicts(t *testing.T) {
	t.Parallel()
	f := responderFixture(t, "")
	res := f.call(t, t.Context(), ToolSnapshotList, map[string]any{"node": "pve1", "type": "qemu", "vmid": 150})
	var list proxmoxsafe.ListSnapshotsResult
	structured(t, res, &list)
	for _, s := range list.Snapshots {
		if s.Cleanup == nil || !s.Cleanup.WouldDelete || s.Cleanup.Rule != retention.RuleMaxAge {
			t.Errorf("%s: cleanup %+v, want would_delete by max-age", s.Name, s.Cleanup)
		}
	}
}
