package mcpserver

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestBackupRestoreDeleteEndToEnd: over MCP, on both protocol versions:
// back up a guest with wait → it is in backup_list → restore it to a new
// VMID with wait → the new guest exists with the backed-up name → delete
// the backup with wait → it is no longer listed. Every call's phrase is
// the one its refusal named.
func TestBackupRestoreDeleteEndToEnd(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			fake := proxmoxtest.NewServer(&proxmoxtest.Cluster{
				Name:  "lab",
				Nodes: []*proxmoxtest.Node{{Name: "pve1", Online: true, RootTotal: 100 << 30}},
				Guests: []*proxmoxtest.Guest{
					{VMID: 120, Node: "pve1", Type: "qemu", Name: "app1", Status: "running", Uptime: 3600, CPUs: 2, MaxMem: 2 << 30, MaxDisk: 8 << 30},
				},
				Storages: []*proxmoxtest.Storage{
					{ID: "local", Type: "dir", Content: []string{"backup", "iso", "vztmpl"}, Total: 100 << 30},
					{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Total: 100 << 30},
				},
			})
			t.Cleanup(fake.Close)
			phrase := []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}
			client, err := proxmoxsafe.New(proxmoxsafe.Config{
				URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
				Fingerprint: fake.Fingerprint(), Audit: newMemAudit(), Logger: slog.New(slog.DiscardHandler),
				Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"},
					Classes:   []proxmoxsafe.Class{proxmoxsafe.ClassBackup, proxmoxsafe.ClassRestore, proxmoxsafe.ClassDestroy},
					Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: phrase}},
			})
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, t.Context(), New(client, nil), pv)
			call := func(name string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			// approved calls name without an approval first, takes the
			// phrase the refusal names, and calls again with it and wait.
			approved := func(name string, args map[string]any) *proxmoxsafe.Receipt {
				t.Helper()
				res := call(name, args)
				if !res.IsError {
					t.Fatalf("%s without an approval: %s", name, text(t, res))
				}
				_, p, ok := strings.Cut(text(t, res), `"approval_phrase":"`)
				p, _, _ = strings.Cut(p, `"`)
				if !ok || !strings.HasPrefix(p, "APPROVE ") {
					t.Fatalf("%s: no approval phrase in %s", name, text(t, res))
				}
				var r proxmoxsafe.Receipt
				structured(t, call(name, withArgs(args, "approval", p, "wait", true)), &r)
				if r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted {
					t.Fatalf("%s: outcome %+v", name, r.Outcome)
				}
				return &r
			}
			b := approved(ToolBackupCreate, map[string]any{"node": "pve1", "type": "qemu", "vmid": 120, "storage": "local"})
			if !strings.HasPrefix(b.VolID, "local:backup/vzdump-qemu-120-") {
				t.Fatalf("backup volid = %q", b.VolID)
			}
			var list proxmoxsafe.ListBackupsResult
			structured(t, call(ToolBackupList, map[string]any{"node": "pve1", "storage": "local", "vmid": 120}), &list)
			if list.Total != 1 || list.Backups[0].VolID != b.VolID {
				t.Fatalf("backup_list = %+v", list)
			}
			r := approved(ToolBackupRestore, map[string]any{"node": "pve1", "archive": b.VolID, "vmid": 130, "storage": "local-lvm"})
			if r.NewGuest == nil || r.NewGuest.VMID != 130 {
				t.Fatalf("restore receipt = %+v", r)
			}
			var st proxmoxsafe.GuestStatusResult
			structured(t, call(ToolGuestStatus, map[string]any{"node": "pve1", "type": "qemu", "vmid": 130}), &st)
			if st.Name != "app1" || st.Status != "stopped" {
				t.Fatalf("restored guest = %+v", st)
			}
			approved(ToolBackupDelete, map[string]any{"node": "pve1", "volume": b.VolID})
			structured(t, call(ToolBackupList, map[string]any{"node": "pve1", "storage": "local", "vmid": 120}), &list)
			if list.Total != 0 {
				t.Fatalf("after delete, backup_list = %+v", list)
			}
		})
	}
}
