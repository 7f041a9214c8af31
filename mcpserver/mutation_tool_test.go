package mcpserver

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestMutationToolAnswers: each mutation tool names what it does in its
// answer. The plan's answer (plan: true) goes through the same words as a
// receipt's, so every tool's wording is checked without sending anything.
func TestMutationToolAnswers(t *testing.T) {
	t.Parallel()
	pol := everyClassPolicy()
	f := newFixture(t, t.Context(), "", fixtureConfig{policy: &pol})
	suspendInMemory := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}
	type answerCase struct {
		tool string
		args map[string]any
		want string
	}
	cases := []answerCase{{ToolGuestSuspend, suspendInMemory, "Plan only for the suspend of VM 100 (web-01) on pve1, nothing was changed"}}
	for _, ti := range Tools(nil, nil) {
		if tc := toolCases[ti.Name]; tc.planAnswer != "" {
			cases = append(cases, answerCase{ti.Name, tc.plan, tc.planAnswer})
		}
	}
	if len(cases) != planned()+1 {
		t.Errorf("%d answers to check, want one per tool with a plan (%d) and the suspend in memory", len(cases), planned())
	}
	for _, tc := range cases {
		args := tc.args
		res := f.call(t, t.Context(), tc.tool, with(args, "plan", true))
		if got := text(t, res); res.IsError || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: IsError=%v, text\n%s\nwant it to begin with\n%s", tc.tool, res.IsError, got, tc.want)
		}
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		for _, r := range m {
			if !strings.HasSuffix(r.Path, "/agent/ping") { // vm_reset's precondition
				t.Errorf("mutating request: %s %s", r.Method, r.Path)
			}
		}
	}
}

// TestReadOnlyHandlersRefuse checks the handlers themselves, for a server
// that registered them despite read-only mode (New and AddTools leave them
// out): every tool that is not read-only refuses before the library is
// called, so Proxmox sees no request at all.
func TestReadOnlyHandlersRefuse(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	client := newClient(t, fake, everyClassPolicy(), "", newMemAudit(), nil)
	server := mcp.NewServer(&mcp.Implementation{Name: "by-hand", Version: "v0"}, nil)
	a := &adapter{client: client, readOnly: true, log: slog.New(slog.DiscardHandler)}
	var names []string
	for _, d := range toolList() {
		if !d.info.ReadOnly() {
			d.register(server, d.served(client.MaxWait()), a)
			names = append(names, d.info.Name)
		}
	}
	cs := connect(t, t.Context(), server, "")
	for _, name := range names {
		args := toolCases[name].plan
		if args == nil {
			t.Errorf("%s: no plan arguments in toolCases", name)
			continue
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "read-only mode") {
			t.Errorf("%s in read-only mode: IsError=%v %s", name, res.IsError, text(t, res))
		}
	}
	if len(names) < planned() {
		t.Errorf("only %d tools change something, toolCases plans %d", len(names), planned())
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached Proxmox", n)
	}
}
