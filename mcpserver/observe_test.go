package mcpserver

import (
	"strings"
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

// TestFleetObserveMiddleware: on a fleet each call is reported with the
// cluster it was for: a configured name, "*" for a read across several (a
// list too), "" for a call that named none configured (so a client cannot
// grow the label set) or "*" where the tool reads one cluster;
// cluster_list is a declared tool. A fleet of one reports its name.
func TestFleetObserveMiddleware(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	prod := newFleetMember(t, "prod", defaultPolicy())
	var mu sync.Mutex
	var calls []ToolCall
	observe := func(c ToolCall) {
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
	}
	server := NewFleet(fleetClients(lab, prod), nil)
	server.AddReceivingMiddleware(FleetObserveMiddleware(fleetClients(lab, prod), observe))
	cs := connect(t, t.Context(), server, "")
	for _, c := range []struct {
		tool    string
		cluster any
	}{
		{ToolListGuests, "prod"},
		{ToolHealthReport, "*"},
		{ToolStorageList, []string{"lab", "prod"}},
		{ToolListGuests, "secret-" + t.Name()},
		{ToolListGuests, []string{"secret-" + t.Name()}},
		{ToolGuestStatus, "*"},
		{ToolClusterList, nil},
	} {
		args := map[string]any{}
		if c.cluster != nil {
			args["cluster"] = c.cluster
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: args}); err != nil {
			t.Fatal(err)
		}
	}
	one := NewFleet(fleetClients(lab), nil)
	one.AddReceivingMiddleware(FleetObserveMiddleware(fleetClients(lab), observe))
	if _, err := connect(t, t.Context(), one, "").CallTool(t.Context(), &mcp.CallToolParams{Name: ToolListGuests, Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, c := range calls {
		got = append(got, c.Tool+"@"+c.Cluster+":"+c.Outcome)
	}
	want := []string{"list_guests@prod:ok", "health_report@*:ok", "storage_list@*:ok", "list_guests@:refused", "list_guests@*:refused",
		"guest_status@:refused", "cluster_list@:ok", "list_guests@lab:ok"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("observed %v\nwant     %v", got, want)
	}
}
