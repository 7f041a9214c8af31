package mcpserver

import (
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestAddToolsAuditsSchemaRefusals: a server built with AddTools and the
// exported Middleware keeps the promise a server built with New keeps: a
// mutation refused by the input schema (go-sdk refuses it before the tool
// runs) leaves exactly one "refused" audit record, and nothing is sent.
func TestAddToolsAuditsSchemaRefusals(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	audit := newMemAudit()
	client := newClient(t, fake, defaultPolicy(), "", audit, slog.New(slog.DiscardHandler))
	server := mcp.NewServer(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	AddTools(server, client, nil)
	server.AddReceivingMiddleware(Middleware(client, nil)...)
	cs := connect(t, t.Context(), server, "")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: map[string]any{
		"node": "pve1", "type": "qemu", "vmid": 5, "action": "stop"}})
	if err != nil || !res.IsError {
		t.Fatalf("guest_power vmid 5: %v %s", err, mustJSON(t, res))
	}
	recs := audit.records(t)
	if len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused || recs[0].Op != proxmoxsafe.OpGuestPower {
		t.Errorf("audit records = %+v, want exactly one refused GuestPower", recs)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d upstream requests after an invalid input", n)
	}
}
