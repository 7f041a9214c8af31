package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestHealthReportTool: over MCP, the report on the seeded demo cluster
// says how many findings of each severity and the first critical one,
// and carries them as structured content; a node off the allowlist is
// refused without a request.
func TestHealthReportTool(t *testing.T) {
	t.Parallel()
	c := proxmoxtest.DemoCluster()
	proxmoxtest.SeedHealthFindings(c)
	f := newFixture(t, t.Context(), "", fixtureConfig{cluster: c})
	res := f.call(t, t.Context(), ToolHealthReport, map[string]any{"min_severity": "warning"})
	txt := text(t, res)
	if res.IsError || !strings.HasPrefix(txt, "Health of cluster: ") || !strings.Contains(txt, "; first: ") {
		t.Fatalf("health_report: %v %q", res.IsError, txt)
	}
	var out proxmoxsafe.HealthReportResult
	structured(t, res, &out)
	if out.Critical == 0 || out.Info != 0 || len(out.Findings) != out.Total || out.Findings[0].Severity != proxmoxsafe.SeverityCritical {
		t.Errorf("structured = %+v", out)
	}
	for _, r := range f.fake.Requests() {
		if r.Method != "GET" {
			t.Errorf("health_report sent %s %s", r.Method, r.Path)
		}
	}
	f.fake.ResetRequests()
	res = f.call(t, t.Context(), ToolHealthReport, map[string]any{"node": "pve3"})
	if !res.IsError || !strings.Contains(text(t, res), "allowlist") || len(f.fake.Requests()) != 0 {
		t.Errorf("pve3 (off the allowlist): %v %q, %d requests", res.IsError, text(t, res), len(f.fake.Requests()))
	}
}
