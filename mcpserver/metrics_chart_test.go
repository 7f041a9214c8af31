package mcpserver

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMetricsChartTool: the answer is the summary line and a PNG image,
// with no structuredContent (a host such as Claude Code drops the image of
// a result that has one), and the tool declares no output schema.
func TestMetricsChartTool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, ctx, "", fixtureConfig{cluster: metricsCluster()})
	res := f.call(t, ctx, ToolMetricsChart, map[string]any{"node": "pve1", "type": "qemu", "vmid": 102, "timeframe": "day"})
	if res.IsError || res.StructuredContent != nil || len(res.Content) != 2 {
		t.Fatalf("result: error %v, structured %v, %d contents", res.IsError, res.StructuredContent != nil, len(res.Content))
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(txt, "VM 102 on pve1, last day (average): CPU avg ") {
		t.Errorf("text = %s", txt)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" {
		t.Fatalf("second content %T", res.Content[1])
	}
	if p, err := png.Decode(bytes.NewReader(img.Data)); err != nil || p.Bounds().Dx() != 800 || p.Bounds().Dy() != 400 {
		t.Errorf("image: %v, %v", err, p)
	}
	t.Logf("chart result: %d B PNG", len(img.Data))
	// Nothing to draw: the line says so, no image.
	res = f.call(t, ctx, ToolMetricsChart, map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "timeframe": "hour"})
	if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "nothing to draw") {
		t.Errorf("stopped VM: %+v", res.Content)
	}
	lt, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		if tool.Name == ToolMetricsChart && tool.OutputSchema != nil {
			t.Errorf("metrics_chart declares an output schema: %v", tool.OutputSchema)
		}
	}
}
