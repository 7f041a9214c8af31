package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/metricschart"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// metricsChartTool declares the metrics_chart tool: metrics_history drawn
// as a PNG. Its result is an image content and the one-line summary, and
// no structuredContent: Claude Code drops the image of a result that
// also carries structuredContent (anthropics/claude-code#54737), and a
// tool that declares an output schema must send structuredContent. So it
// is a tool of its own, without an output schema (docs/METRICS.md).
func metricsChartTool() toolDef {
	return toolDef{
		info: ToolInfo{Name: ToolMetricsChart, Title: "Metrics chart", Annotations: readAnnotations,
			Description: "metrics_history as a PNG chart, with its summary line.",
			AppResource: ResourceMetricsChartApp}, // metrics_chart_app.go
		ops:      ops(proxmoxsafe.OpNodeMetrics, proxmoxsafe.OpGuestMetrics, proxmoxsafe.OpStorageMetrics),
		schemas:  inputOnly[proxmoxsafe.MetricsHistoryInput],
		input:    reflect.TypeFor[proxmoxsafe.MetricsHistoryInput](),
		register: imageResult((*adapter).metricsChart),
	}
}

// inputOnly is schemasFor for a tool with no structured result.
func inputOnly[In any]() (in, out *jsonschema.Schema) {
	in, _ = schemasFor[In, struct{}]()
	return in, nil
}

// chartResult is what metricsChart hands imageResult: the PNG and the
// summary.
type chartResult struct {
	png  []byte
	text string
}

func (a *adapter) metricsChart(ctx context.Context, in proxmoxsafe.MetricsHistoryInput) (string, *chartResult, error) {
	res, err := a.client.MetricsHistory(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := metricsSummary(res)
	png, err := metricschart.PNG(res)
	if errors.Is(err, metricschart.ErrNoData) {
		return text + " (nothing to draw)", &chartResult{text: text + " (nothing to draw)"}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("drawing the chart: %w", err)
	}
	return text, &chartResult{png: png, text: text}, nil
}

// imageResult registers a handler whose result is an image with its text
// and no structuredContent.
func imageResult[In any](h handlerFunc[In, *chartResult]) func(toolAdder, *servedSchemas, *adapter) {
	return func(s toolAdder, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(ctx context.Context, name, text string, o *chartResult, err error) (*mcp.CallToolResult, any, error) {
			if err != nil {
				return nil, nil, toolError(ctx, name, err)
			}
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
			if o != nil && len(o.png) > 0 {
				res.Content = append(res.Content, &mcp.ImageContent{Data: o.png, MIMEType: "image/png"})
			}
			return res, nil, nil
		})
	}
}
