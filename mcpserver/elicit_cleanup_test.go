package mcpserver

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// cleanupElicitFixture is the responder class approved by elicitation,
// with guest 150 holding three snapshots the retention policy deletes.
func cleanupElicitFixture(t *testing.T) *elicitFixture {
	t.Helper()
	now := time.Now().Unix()
	c := proxmoxtest.DemoCluster()
	c.Guests = append(c.Guests, &proxmoxtest.Guest{VMID: 150, Node: "pve1", Type: "qemu", Name: "snaps", Status: "running", Uptime: 7200,
		Snapshots: []*proxmoxtest.Snapshot{
			{Name: "old1", SnapTime: now - 50*3600},
			{Name: "old2", Parent: "old1", SnapTime: now - 40*3600},
		}})
	fake := proxmoxtest.NewServer(c)
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassResponder: {proxmoxsafe.LevelElicit}}}
	audit := newMemAudit()
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Policy: pol, Audit: audit,
		Approvers: []proxmoxsafe.Approver{ap}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitFixture{fake: fake, audit: audit, approver: ap, server: New(client, nil)}
}

// TestSnapshotCleanupElicit: with the responder class at level elicit,
// snapshot_cleanup with apply asks the person at the client like the other
// mutation tools, on both protocol versions: the right VMID runs the
// deletions; a decline or a wrong VMID sends nothing mutating and is
// audited; a dry run asks nothing.
func TestSnapshotCleanupElicit(t *testing.T) {
	t.Parallel()
	apply := map[string]any{"node": "pve1", "type": "qemu", "vmid": 150, "apply": true}
	for _, pv := range protocols {
		for _, tc := range []struct {
			name   string
			answer *mcp.ElicitResult
			want   string // "" : approved
		}{
			{"accept", accept("150"), ""},
			{"wrong vmid", accept("151"), "does not match"},
			{"decline", &mcp.ElicitResult{Action: "decline"}, "declined"},
		} {
			t.Run(protoName(pv)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := cleanupElicitFixture(t)
				var asked atomic.Int32
				cs := f.connectWith(t, pv, answering(&asked, nil, func(int32) *mcp.ElicitResult { return tc.answer }))
				dry, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotCleanup, Arguments: map[string]any{"node": "pve1", "type": "qemu", "vmid": 150}})
				if err != nil || dry.IsError || asked.Load() != 0 {
					t.Fatalf("dry run: %v, asked %d: %s", err, asked.Load(), mustJSON(t, dry))
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotCleanup, Arguments: apply})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if asked.Load() != 1 {
					t.Fatalf("the person was asked %d times, want 1: %s", asked.Load(), mustJSON(t, res))
				}
				deletes := 0
				for _, m := range f.fake.MutatingRequests() {
					if m.Method == "DELETE" {
						deletes++
					}
				}
				if tc.want == "" {
					if res.IsError || deletes != 2 || !strings.Contains(text(t, res), "Deleted 2 snapshot") {
						t.Fatalf("approved: %d deletions: %s", deletes, mustJSON(t, res))
					}
					return
				}
				if !res.IsError || len(f.fake.MutatingRequests()) != 0 || !strings.Contains(text(t, res), tc.want) {
					t.Fatalf("want a refusal saying %q with nothing sent; %d mutating: %s", tc.want, len(f.fake.MutatingRequests()), mustJSON(t, res))
				}
				if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, tc.want) {
					t.Errorf("audit %+v, want a refusal saying %q", rec, tc.want)
				}
			})
		}
	}
}
