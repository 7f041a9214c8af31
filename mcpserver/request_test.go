package mcpserver

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// probeApprover records the MCP request it finds in its context, then
// decides like the phrase approver.
type probeApprover struct{ seen chan *mcp.CallToolRequest }

func (p probeApprover) Name() string { return "probe" }

func (p probeApprover) Approve(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
	p.seen <- RequestFromContext(ctx)
	return proxmoxsafe.PhraseApprover{}.Approve(ctx, req)
}

// TestRequestFromContext: an approver reaches the tools/call request it is
// approving (the seam elicitation builds on), on servers built with New
// and with AddTools.
func TestRequestFromContext(t *testing.T) {
	t.Parallel()
	if RequestFromContext(t.Context()) != nil {
		t.Fatal("a request outside a tool call")
	}
	for _, embedded := range []bool{false, true} {
		fake := proxmoxtest.NewServer(nil)
		t.Cleanup(fake.Close)
		probe := probeApprover{seen: make(chan *mcp.CallToolRequest, 1)}
		pol := defaultPolicy()
		pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {"probe"}}
		client, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
			Fingerprint: fake.Fingerprint(), Policy: pol, Audit: newMemAudit(),
			Approvers: []proxmoxsafe.Approver{probe}, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		var server *mcp.Server
		if embedded {
			server = mcp.NewServer(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
			AddTools(server, client, nil)
		} else {
			server = New(client, nil)
		}
		cs := connect(t, t.Context(), server, "")
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: map[string]any{
			"node": "pve1", "type": "qemu", "vmid": 101, "action": "shutdown", "approval": "APPROVE shutdown pve1/qemu/101"}})
		if err != nil || res.IsError {
			t.Fatalf("embedded=%v: guest_power: %v %s", embedded, err, mustJSON(t, res))
		}
		req := <-probe.seen
		if req == nil || req.Params == nil || req.Params.Name != ToolGuestPower || req.Session == nil {
			t.Errorf("embedded=%v: approver saw request %+v", embedded, req)
		}
	}
}
