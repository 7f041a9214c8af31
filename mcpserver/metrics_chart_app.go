package mcpserver

import (
	"context"
	_ "embed"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP Apps view of metrics_chart (the io.modelcontextprotocol/ui
// extension, stable 2026-01-26): a host that renders MCP Apps reads this
// resource, loads the page in a sandboxed iframe and hands it the tool's
// input and result; the page shows the PNG with its summary line and can
// ask the host to call metrics_chart again for another timeframe or
// consolidation. A host without MCP Apps ignores the tool's _meta and shows
// the same result as content: the image and the line (docs/METRICS.md).
const (
	// ResourceMetricsChartApp is the view's URI, the tool's
	// _meta.ui.resourceUri.
	ResourceMetricsChartApp = "ui://proxmox-safe-mcp/metrics-chart"
	// AppMIMEType is the MIME type of an MCP Apps HTML view.
	AppMIMEType = "text/html;profile=mcp-app"
)

// appMetaKey is the _meta key of the MCP Apps extension, on a tool
// ({"resourceUri": …}) and on a view resource ({"csp": …}). The flat
// "ui/resourceUri" key of the drafts is deprecated, so it is not sent.
const appMetaKey = "ui"

// metricsChartAppHTML is the page: one self-contained document (inline
// style and script, no external script, font, image or request), so it
// runs under the CSP a host derives from an empty csp declaration.
//
//go:embed metrics_chart_app.html
var metricsChartAppHTML string

// appResourceMeta declares what the page needs from its sandbox: no
// origin to connect to or load from (an empty csp: hosts apply their most
// restrictive policy, which allows inline script and data: images), and
// a border, since it is a card of its own in the conversation.
func appResourceMeta() mcp.Meta {
	return mcp.Meta{appMetaKey: map[string]any{"csp": map[string]any{}, "prefersBorder": true}}
}

// addAppResources registers the MCP Apps views whose tool is served
// (served: the names of the served tools; a fleet passes those of every
// cluster). The page holds no data and names no cluster: the cluster is
// in the tool input the host hands it, and the page passes the same
// arguments back when it asks for another timeframe, so one view serves
// every cluster of a fleet.
func addAppResources(server *mcp.Server, served []string) {
	if !slices.Contains(served, ToolMetricsChart) {
		return
	}
	server.AddResource(&mcp.Resource{
		URI: ResourceMetricsChartApp, Name: "metrics-chart-app", Title: "Metrics chart view", MIMEType: AppMIMEType,
		Description: "MCP Apps view of metrics_chart: its PNG and summary line, and buttons to redraw another timeframe or consolidation.",
		Meta:        appResourceMeta(),
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: ResourceMetricsChartApp, MIMEType: AppMIMEType, Text: metricsChartAppHTML, Meta: appResourceMeta(),
		}}}, nil
	})
}
