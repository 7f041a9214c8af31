package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appMeta returns the "ui" member of m as JSON, or "".
func appMeta(t *testing.T, m mcp.Meta) string {
	t.Helper()
	v, ok := m[appMetaKey]
	if !ok {
		return ""
	}
	return mustJSON(t, v)
}

// readApp reads the metrics_chart view and checks its one content.
func readApp(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ResourceMetricsChartApp})
	if err != nil {
		t.Fatalf("resources/read %s: %v", ResourceMetricsChartApp, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%d contents", len(res.Contents))
	}
	c := res.Contents[0]
	if c.URI != ResourceMetricsChartApp || c.MIMEType != "text/html;profile=mcp-app" || c.Text == "" || len(c.Blob) != 0 {
		t.Fatalf("content: uri %q, mimeType %q, %d B text, %d B blob", c.URI, c.MIMEType, len(c.Text), len(c.Blob))
	}
	if got := appMeta(t, c.Meta); got != `{"csp":{},"prefersBorder":true}` {
		t.Errorf("content _meta.ui = %s", got)
	}
	return c.Text
}

// TestMetricsChartApp: metrics_chart's definition names its MCP Apps view
// in _meta.ui.resourceUri (and no other tool has one); the view is listed
// and read as one text/html;profile=mcp-app content, with an empty csp
// declaration (it loads nothing from anywhere); the tool's result stays
// the image and the line for every host.
func TestMetricsChartApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{cluster: metricsCluster()})
	tools, err := f.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		want := ""
		if tool.Name == ToolMetricsChart {
			want = `{"resourceUri":"ui://proxmox-safe-mcp/metrics-chart"}`
		}
		if got := appMeta(t, tool.Meta); got != want {
			t.Errorf("%s: _meta.ui = %s, want %q", tool.Name, got, want)
		}
	}
	list, err := f.cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Resource
	for _, r := range list.Resources {
		if r.URI == ResourceMetricsChartApp {
			listed = r
		}
	}
	if listed == nil || listed.MIMEType != AppMIMEType || appMeta(t, listed.Meta) != `{"csp":{},"prefersBorder":true}` {
		t.Fatalf("resources/list: %s", mustJSON(t, list))
	}
	page := readApp(t, f.cs)
	if page != metricsChartAppHTML || !strings.HasPrefix(page, "<!doctype html>") {
		t.Error("the view is not the embedded page")
	}
	// What the page must never do, whatever a host's CSP allows: load or
	// fetch anything, or parse text as HTML.
	for _, banned := range []string{"http://", "https://", "//cdn", "<link", "src=\"", "fetch(", "XMLHttpRequest", "WebSocket",
		"EventSource", "import(", "eval(", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "localStorage", "cookie"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page contains %q", banned)
		}
	}
	t.Logf("view: %d B", len(page))
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("listing and reading the view sent %d requests to Proxmox", n)
	}
}

// TestMetricsChartAppFollowsTheTool: the view is listed only where
// metrics_chart is served, on one server and on a fleet (one view for
// every cluster: it holds no data and names no cluster); without the tool
// reading it is "resource not found".
func TestMetricsChartAppFollowsTheTool(t *testing.T) {
	t.Parallel()
	hidden := Options{Selection: Selection{ExcludeTools: []string{ToolMetricsChart}}}
	lab, prod := newFleetMember(t, "lab", defaultPolicy()), newFleetMember(t, "prod", defaultPolicy())
	for _, tc := range []struct {
		name   string
		cs     *mcp.ClientSession
		served bool
	}{
		{"one cluster", newFixture(t, t.Context(), "", fixtureConfig{}).cs, true},
		{"one cluster without metrics_chart", newFixture(t, t.Context(), "", fixtureConfig{opts: hidden}).cs, false},
		{"read-only", newFixture(t, t.Context(), "", fixtureConfig{opts: Options{ReadOnly: true}}).cs, true},
		{"fleet", connect(t, t.Context(), NewFleet(fleetClients(lab, prod), nil), ""), true},
		{"fleet without metrics_chart", connect(t, t.Context(), NewFleet(fleetClients(lab, prod), &hidden), ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := tc.cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range list.Resources {
				if strings.HasPrefix(r.URI, "ui://") {
					n++
				}
			}
			tools, err := tc.cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var chart *mcp.Tool
			for _, tool := range tools.Tools {
				if tool.Name == ToolMetricsChart {
					chart = tool
				}
			}
			if !tc.served {
				var rpc *jsonrpc.Error
				_, err := tc.cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ResourceMetricsChartApp})
				if n != 0 || chart != nil || !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
					t.Errorf("without metrics_chart: %d ui:// resources listed, tool %v, read: %v", n, chart != nil, err)
				}
				return
			}
			if n != 1 || chart == nil || appMeta(t, chart.Meta) != `{"resourceUri":"ui://proxmox-safe-mcp/metrics-chart"}` {
				t.Fatalf("%d ui:// resources listed; tool %s", n, mustJSON(t, chart))
			}
			readApp(t, tc.cs)
		})
	}
	// On a fleet the page hands back the tool input it was given, cluster
	// included: that call works as the model's did.
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, prod), nil), "")
	resetRequests(lab, prod)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolMetricsChart, Arguments: map[string]any{
		"cluster": "prod", "node": "pve1", "type": "qemu", "vmid": 100, "timeframe": "week", "cf": "MAX"}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("fleet metrics_chart: %v %s", err, mustJSON(t, res))
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "last week (max)") {
		t.Errorf("fleet metrics_chart text: %s", got)
	}
	if n := requestCounts(lab, prod); n["lab"] != 0 || n["prod"] == 0 {
		t.Errorf("a call on prod read lab: %v", requestCounts(lab, prod))
	}
}

// wireResult is a tool result as it is sent (what a host hands the view
// in ui/notifications/tool-result).
func wireResult(t *testing.T, res *mcp.CallToolResult) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
