package mcpserver

import (
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestObserveMiddleware: each tools/call is reported once with its tool,
// outcome and refusal kind; a name no tool has is "unknown", so a client
// cannot grow a metric's label set; other methods are not reported.
func TestObserveMiddleware(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []ToolCall
	f := newFixture(t, t.Context(), "", fixtureConfig{extra: func(s *mcp.Server) {
		s.AddReceivingMiddleware(ObserveMiddleware(func(c ToolCall) {
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
		}))
	}})
	f.call(t, t.Context(), ToolListGuests, map[string]any{})
	f.call(t, t.Context(), ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"})
	if _, err := f.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no_such_tool_" + t.Name()}); err == nil {
		t.Log("unknown tool answered without a protocol error")
	}
	if _, err := f.cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 {
		t.Fatalf("calls %+v, want 3", calls)
	}
	if c := calls[0]; c.Tool != ToolListGuests || c.Outcome != OutcomeOK || c.Kind != "" || c.Duration <= 0 {
		t.Errorf("list_guests: %+v", c)
	}
	if c := calls[1]; c.Tool != ToolGuestPower || c.Outcome != OutcomeRefused || c.Kind != "approval required" {
		t.Errorf("guest_power without approval: %+v", c)
	}
	if c := calls[2]; c.Tool != "unknown" || c.Outcome != OutcomeError {
		t.Errorf("unknown tool: %+v", c)
	}
}
