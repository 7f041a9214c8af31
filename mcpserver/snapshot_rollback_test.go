package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// snapshot_rollback refuses without approval and says what is lost; with
// the phrase it rolls back (verified), and snapshot_delete deletes.
func TestSnapshotRollbackDeleteTools(t *testing.T) {
	t.Parallel()
	f := adminFixture(t, "")
	ctx := t.Context()
	args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "pre-upgrade", "wait": true}
	res := f.call(t, ctx, ToolSnapshotRollback, args)
	if txt := text(t, res); !res.IsError || !strings.Contains(txt, "APPROVE rollback pve1/qemu/100/pre-upgrade") || !strings.Contains(txt, "is lost") || !strings.Contains(txt, "has no RAM") {
		t.Fatalf("without approval: %v %q", res.IsError, txt)
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Fatalf("mutating requests after a refusal: %v", m)
	}
	args["approval"] = "APPROVE rollback pve1/qemu/100/pre-upgrade"
	res = f.call(t, ctx, ToolSnapshotRollback, args)
	if res.IsError {
		t.Fatalf("rollback: %q", text(t, res))
	}
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if r.Task.Type != "qmrollback" || r.Outcome == nil || !r.Outcome.Verified || r.Outcome.Observed != "current state based on pre-upgrade" {
		t.Errorf("rollback receipt = %+v", r)
	}
	res = f.call(t, ctx, ToolSnapshotDelete, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "weekly-2025-01", "wait": true,
		"approval": "APPROVE delsnapshot pve1/qemu/100/weekly-2025-01"})
	if res.IsError {
		t.Fatalf("delete: %q", text(t, res))
	}
	structured(t, res, &r)
	if r.Task.Type != "qmdelsnapshot" || r.Outcome == nil || !r.Outcome.Verified {
		t.Errorf("delete receipt = %+v", r)
	}
	m := f.fake.MutatingRequests()
	if len(m) != 2 || m[0].Method != "POST" || m[0].Path != "/nodes/pve1/qemu/100/snapshot/pre-upgrade/rollback" || m[1].Method != "DELETE" || m[1].Path != "/nodes/pve1/qemu/100/snapshot/weekly-2025-01" {
		t.Errorf("mutating requests = %+v", m)
	}
}
