package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func responderFixture(t *testing.T, pv string) *fixture {
	t.Helper()
	now := time.Now().Unix()
	c := proxmoxtest.DemoCluster()
	c.Guests = append(c.Guests, &proxmoxtest.Guest{VMID: 150, Node: "pve1", Type: "qemu", Name: "snaps", Status: "running", Uptime: 7200,
		Snapshots: []*proxmoxtest.Snapshot{
			{Name: "old1", SnapTime: now - 50*3600},
			{Name: "old2", Parent: "old1", SnapTime: now - 40*3600},
			{Name: "old3", Parent: "old2", SnapTime: now - 30*3600},
		}})
	pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassResponder: {proxmoxsafe.LevelNone}}}
	return newFixture(t, t.Context(), pv, fixtureConfig{cluster: c, policy: &pol})
}

// A cleanup stopped by a failed deletion is a tool error that still
// carries what was done as structured content.
func TestSnapshotCleanupPartialFailure(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := responderFixture(t, pv)
			f.fake.FailNextTask("WARNINGS: 1")
			f.fake.FailNextTask("zfs error: dataset is busy")
			res := f.call(t, t.Context(), ToolSnapshotCleanup, map[string]any{"node": "pve1", "type": "qemu", "vmid": 150, "apply": true})
			if !res.IsError {
				t.Fatalf("want a tool error, got %s", text(t, res))
			}
			txt := text(t, res)
			for _, want := range []string{"Stopped after 1 deletion", "old1: deleted", "old2: failed", "dataset is busy", "old3: not_attempted"} {
				if !strings.Contains(txt, want) {
					t.Errorf("text %q lacks %q", txt, want)
				}
			}
			var out proxmoxsafe.CleanupResult
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil || out.Deleted != 1 || len(out.Steps) != 3 {
				t.Errorf("structured content %s (%v)", b, err)
			}
		})
	}
}
