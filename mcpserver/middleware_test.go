package mcpserver

import (
	"encoding/json"
	"log/slog"
	"strings"
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

func TestLoggingMiddleware(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			logs := &syncBuffer{}
			f := newFixture(t, ctx, pv, fixtureConfig{opts: Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))}})
			const secretish = "APPROVE stop pve1/qemu/100 but-this-is-wrong"
			f.call(t, ctx, ToolClusterStatus, nil)
			f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop", "approval": secretish})
			f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 5, "action": "stop"})
			f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 999, "action": "stop", "approval": "APPROVE stop pve1/qemu/999"})
			_, _ = f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})

			type line struct {
				Msg      string `json:"msg"`
				Tool     string `json:"tool"`
				Outcome  string `json:"outcome"`
				Reason   string `json:"reason"`
				Duration int64  `json:"duration"`
			}
			var got []line
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var ln line
				if err := json.Unmarshal([]byte(l), &ln); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				if ln.Msg == "tool call" {
					got = append(got, ln)
				}
			}
			want := []struct{ tool, outcome, reason string }{
				{ToolClusterStatus, OutcomeOK, ""},
				{ToolGuestPower, OutcomeRefused, "approval required"},
				{ToolGuestPower, OutcomeRefused, "invalid input"},
				{ToolGuestPower, OutcomeError, ""},
				{"no_such_tool", OutcomeError, ""},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d tool call lines, want %d: %s", len(got), len(want), logs.String())
			}
			for i, w := range want {
				if got[i].Tool != w.tool || got[i].Outcome != w.outcome || got[i].Reason != w.reason {
					t.Errorf("line %d = %+v, want %+v", i, got[i], w)
				}
			}
			if strings.Contains(logs.String(), "but-this-is-wrong") {
				t.Error("an argument value was logged")
			}
		})
	}
}
