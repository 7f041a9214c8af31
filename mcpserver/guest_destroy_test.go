package mcpserver

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// destroyFixture serves the admin profile with the default approval
// levels (destroy: elicit, then grant) and their approvers, over a cluster with a stopped VM 120 (two
// snapshots) and a running VM 121.
func newDestroyFixture(t *testing.T, approvals map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel) *elicitFixture {
	t.Helper()
	fake := proxmoxtest.NewServer(&proxmoxtest.Cluster{
		Name:  "lab",
		Nodes: []*proxmoxtest.Node{{Name: "pve1", Online: true}},
		Guests: []*proxmoxtest.Guest{
			{VMID: 120, Node: "pve1", Type: "qemu", Name: "old1", Status: "stopped", MaxDisk: 32 << 30,
				Snapshots: []*proxmoxtest.Snapshot{{Name: "s1", SnapTime: 1700000000}, {Name: "s2", Parent: "s1", SnapTime: 1700000100}}},
			{VMID: 121, Node: "pve1", Type: "qemu", Name: "busy", Status: "running", Uptime: 3600},
		},
	})
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := proxmoxsafe.ProfileAdmin.Classes()
	if err != nil {
		t.Fatal(err)
	}
	audit := newMemAudit()
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Audit: audit, Logger: slog.New(slog.DiscardHandler),
		Policy:    proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: classes, Approvals: approvals},
		Approvers: []proxmoxsafe.Approver{ap, grants},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitFixture{fake: fake, audit: audit, approver: ap, server: New(client, nil)}
}

var destroy120 = map[string]any{"node": "pve1", "type": "qemu", "vmid": 120, "purge": false, "destroy_unreferenced_disks": true}

func withArgs(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// The person at the client approves a destroy in the elicitation form,
// which shows what will be lost; the one DELETE follows, verified, on
// both protocol versions.
func TestGuestDestroyElicitApproves(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newDestroyFixture(t, nil)
			var asked atomic.Int32
			seen := make(chan string, 4)
			cs := f.connectWith(t, pv, answering(&asked, seen, func(int32) *mcp.ElicitResult { return accept("120") }))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestDestroy, Arguments: withArgs(destroy120, "wait", true)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || asked.Load() != 1 {
				t.Fatalf("IsError=%v, asked %d times: %s", res.IsError, asked.Load(), mustJSON(t, res))
			}
			msg := <-seen
			for _, want := range []string{"Action: destroy", "Parameters: purge=0 destroy-unreferenced-disks=1", "Target: pve1/qemu/120",
				"scsi0 local-lvm:vm-120-disk-0 (32G)", "its 2 snapshots are deleted", "only a backup can bring"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the form does not show %q:\n%s", want, msg)
				}
			}
			m := f.fake.MutatingRequests()
			if len(m) != 1 || m[0].Method != "DELETE" || m[0].Path != "/nodes/pve1/qemu/120" || m[0].Query.Encode() != "destroy-unreferenced-disks=1&purge=0" {
				t.Fatalf("mutating requests = %+v", m)
			}
			var r proxmoxsafe.Receipt
			structured(t, res, &r)
			if r.Task.Type != "qmdestroy" || r.Outcome == nil || !r.Outcome.Verified || r.Outcome.Observed != "gone from /cluster/resources" {
				t.Errorf("receipt = %+v", r)
			}
			if rec := f.lastAudit(t); rec.Event != "completed" || rec.Op != proxmoxsafe.OpDestroyGuest {
				t.Errorf("last audit record = %+v", rec)
			}
			var approvedBy string
			for _, rec := range f.audit.records(t) {
				if rec.Event == "approved" {
					approvedBy = rec.Approver
				}
			}
			if approvedBy != "elicit" {
				t.Errorf("approved by %q, want elicit", approvedBy)
			}
		})
	}
}

// With the default levels, a client that cannot elicit gets no
// elicitation, and the exact phrase does not approve: nothing is sent,
// and the refusal says what the operator must do (approve the grant code
// on the server host).
func TestGuestDestroyDefaultRefusesPhrase(t *testing.T) {
	t.Parallel()
	f := newDestroyFixture(t, nil)
	cs := f.connectWith(t, "", nil)
	args := withArgs(destroy120, "approval", "APPROVE destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=1")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestDestroy, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	txt := text(t, res)
	for _, want := range []string{"does not approve the \"destroy\" class", "an operator must approve grant", "proxmox-safe-mcp approve ", "no action was taken"} {
		if !strings.Contains(txt, want) {
			t.Errorf("refusal lacks %q: %s", want, txt)
		}
	}
	if !res.IsError || len(f.fake.MutatingRequests()) != 0 {
		t.Fatalf("IsError=%v, mutating %v", res.IsError, f.fake.MutatingRequests())
	}
	if rec := f.lastAudit(t); rec.Event != "refused" || rec.Op != proxmoxsafe.OpDestroyGuest {
		t.Errorf("last audit record = %+v", rec)
	}
}

// plan: true runs the checks and shows what would be lost; a refusal on
// the way (a running guest) says why; neither sends anything mutating.
// With the operator's explicit phrase level, the phrase approves.
func TestGuestDestroyPlanRefusalPhrase(t *testing.T) {
	t.Parallel()
	f := newDestroyFixture(t, map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}})
	cs := f.connectWith(t, "", nil)
	call := func(args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestDestroy, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(withArgs(destroy120, "plan", true))
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if res.IsError || r.Plan == nil || r.UPID != "" || r.Plan.Method != "DELETE" || r.Plan.Approval != "APPROVE destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=1" ||
		!strings.Contains(r.Plan.Effect, "scsi0 local-lvm:vm-120-disk-0 (32G)") {
		t.Fatalf("plan: %s", mustJSON(t, res))
	}
	res = call(map[string]any{"node": "pve1", "type": "qemu", "vmid": 121, "purge": false, "destroy_unreferenced_disks": false,
		"approval": "APPROVE destroy pve1/qemu/121 purge=0 destroy-unreferenced-disks=0"})
	if !res.IsError || !strings.Contains(text(t, res), "VM 121 is running - destroy failed") {
		t.Fatalf("running guest: %s", text(t, res))
	}
	// The choices are required: leaving purge out is an input error.
	res = call(map[string]any{"node": "pve1", "type": "qemu", "vmid": 120, "destroy_unreferenced_disks": false})
	if !res.IsError || !strings.Contains(text(t, res), "purge") {
		t.Fatalf("purge left out: %s", text(t, res))
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Fatalf("mutating requests before approval: %v", m)
	}
	res = call(withArgs(destroy120, "approval", "APPROVE destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=1"))
	if res.IsError || !strings.Contains(text(t, res), "destroy of VM 120") {
		t.Fatalf("approved: %s", text(t, res))
	}
	if m := f.fake.MutatingRequests(); len(m) != 1 {
		t.Fatalf("mutating requests = %v, want the one DELETE", m)
	}
}
