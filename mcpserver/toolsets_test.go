package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEveryToolInOneToolset: the toolsets table covers every tool once
// and names no tool that does not exist.
func TestEveryToolInOneToolset(t *testing.T) {
	t.Parallel()
	seen := map[string]Toolset{}
	for _, ts := range Toolsets() {
		if len(ts.Tools) == 0 || ts.About == "" {
			t.Errorf("toolset %s: %+v", ts.Name, ts)
		}
		for _, tool := range ts.Tools {
			if prev, ok := seen[tool]; ok {
				t.Errorf("%s is in toolsets %s and %s", tool, prev, ts.Name)
			}
			seen[tool] = ts.Name
		}
	}
	for _, d := range toolList() {
		if seen[d.info.Name] == "" || ToolsetOf(d.info.Name) != seen[d.info.Name] {
			t.Errorf("%s is in no toolset (add it to the toolsets table, toolsets.go)", d.info.Name)
		}
		delete(seen, d.info.Name)
	}
	for tool := range seen {
		t.Errorf("toolsets name %s, which is no tool", tool)
	}
}

func TestSelectionSelects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sel  Selection
		tool string
		want bool
	}{
		{Selection{}, ToolVMReset, true},
		{Selection{Toolsets: []Toolset{ToolsetSnapshots}}, ToolSnapshotGuest, true},
		{Selection{Toolsets: []Toolset{ToolsetSnapshots}}, ToolGuestPower, false},
		{Selection{Toolsets: []Toolset{ToolsetSnapshots}, Tools: []string{ToolGuestPower}}, ToolGuestPower, true},
		{Selection{Tools: []string{ToolGuestPower}}, ToolListGuests, false},
		{Selection{ExcludeTools: []string{ToolVMReset}}, ToolVMReset, false},
		{Selection{ExcludeTools: []string{ToolVMReset}}, ToolVMStart, true},
		{Selection{ExcludeToolsets: []Toolset{ToolsetGateway}}, ToolAPIGet, false},
		// An exclusion wins over an inclusion.
		{Selection{Tools: []string{ToolAPIGet}, ExcludeToolsets: []Toolset{ToolsetGateway}}, ToolAPIGet, false},
	} {
		if got := tc.sel.Selects(tc.tool); got != tc.want {
			t.Errorf("%s selects %s = %v, want %v", tc.sel, tc.tool, got, tc.want)
		}
	}
	err := Selection{Toolsets: []Toolset{"snapshot"}, ExcludeTools: []string{"vm_rest"}}.Check()
	if err == nil || !strings.Contains(err.Error(), `unknown toolset "snapshot"`) || !strings.Contains(err.Error(), `unknown tool "vm_rest"`) || !strings.Contains(err.Error(), "snapshots") {
		t.Errorf("Check = %v", err)
	}
	if err := (Selection{Toolsets: []Toolset{ToolsetCluster}, Tools: []string{ToolVMReset}}).Check(); err != nil {
		t.Errorf("Check = %v", err)
	}
}

// TestSelectionOnlyHides: the selection lists fewer tools, never one the
// policy does not enable, and a hidden tool is refused as unknown before
// anything is sent; the instructions and permissions_check follow the
// tools listed.
func TestSelectionOnlyHides(t *testing.T) {
	t.Parallel()
	sel := Selection{Toolsets: []Toolset{ToolsetSnapshots}, Tools: []string{ToolVMCreate, ToolClusterStatus}, ExcludeTools: []string{ToolSnapshotList}}
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			// The default policy: power and snapshot only (vm_create's
			// provision class is not enabled).
			f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{Selection: sel}})
			res, err := f.cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if want := []string{ToolClusterStatus, ToolSnapshotGuest}; !slices.Equal(names, want) {
				t.Errorf("listed %v, want %v", names, want)
			}
			var got []string
			for _, ti := range Tools(f.client, &Options{Selection: sel}) {
				got = append(got, ti.Name)
			}
			if !slices.Equal(got, names) {
				t.Errorf("Tools = %v, listed %v", got, names)
			}
			for _, hidden := range []string{ToolGuestPower, ToolSnapshotList, ToolVMCreate} {
				_, err := f.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: hidden, Arguments: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"}})
				if err == nil || !strings.Contains(err.Error(), "unknown tool") {
					t.Errorf("calling hidden %s: %v", hidden, err)
				}
			}
			if n := len(f.fake.Requests()); n != 0 {
				t.Errorf("hidden tools sent %d requests: %v", n, requestLines(f.fake.Requests()))
			}
			if recs := f.audit.records(t); len(recs) != 0 {
				t.Errorf("hidden tools wrote audit records: %+v", recs)
			}
			if ins := f.cs.InitializeResult().Instructions; ins != ServerInstructions(f.client, &Options{Selection: sel}) || !strings.Contains(ins, instructionsPhrase) {
				t.Errorf("instructions %q", ins)
			}
			perm, err := CheckPermissions(t.Context(), f.client, &Options{Selection: sel})
			if err != nil {
				t.Fatal(err)
			}
			var checked []string
			for _, tp := range perm.Tools {
				checked = append(checked, tp.Tool)
			}
			if !slices.Equal(checked, names) {
				t.Errorf("permissions_check covers %v, want %v", checked, names)
			}
		})
	}
}

// TestSelectionReadOnlyServer: selecting only reads leaves instructions
// that say nothing about approvals.
func TestSelectionReadOnlyServer(t *testing.T) {
	t.Parallel()
	client := newFixture(t, t.Context(), "", fixtureConfig{}).client
	ins := ServerInstructions(client, &Options{Selection: Selection{Toolsets: []Toolset{ToolsetCluster}}})
	if strings.Contains(ins, "approval") {
		t.Errorf("instructions of a read-only selection: %q", ins)
	}
}

func TestNewRefusesAnUnknownSelection(t *testing.T) {
	t.Parallel()
	client := newFixture(t, t.Context(), "", fixtureConfig{}).client
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `unknown tool "guest_pwer"`) {
			t.Errorf("recovered %v", r)
		}
	}()
	New(client, &Options{Selection: Selection{Tools: []string{"guest_pwer"}}})
}
