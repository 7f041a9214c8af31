package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// metricsCluster is the demo cluster with its history ending at a fixed
// time (2026-03-02 13:37 UTC), so texts and sizes do not move.
func metricsCluster() *proxmoxtest.Cluster {
	c := proxmoxtest.DemoCluster()
	c.RRD = &proxmoxtest.RRD{Now: func() time.Time { return time.Unix(1772458620, 0) }}
	return c
}

func TestMetricsHistoryTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{cluster: metricsCluster()})
			res := f.call(t, ctx, ToolMetricsHistory, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "timeframe": "day"})
			var out proxmoxsafe.MetricsHistoryResult
			structured(t, res, &out)
			txt := text(t, res)
			for _, want := range []string{"VM 100 on pve1, last day (average): CPU avg ", "% at 2026-03-0", "; memory avg ", " of 8.0 GiB", "host memory avg", "net in avg ", "IO pressure avg", "1439 rows, 60 points of 24m"} {
				if !strings.Contains(txt, want) {
					t.Errorf("text lacks %q:\n%s", want, firstLine(txt))
				}
			}
			if len(out.Points) != proxmoxsafe.DefaultMetricsPoints || out.Series[0].Name != "cpu" {
				t.Errorf("points %d, series %v", len(out.Points), out.Series)
			}
			// A stopped container: an answer, no usage.
			res = f.call(t, ctx, ToolMetricsHistory, map[string]any{"node": "pve2", "type": "lxc", "vmid": 203, "timeframe": "hour"})
			if txt := firstLine(text(t, res)); res.IsError || !strings.Contains(txt, "container 203 on pve2, last hour (average): no usage data; 59 rows") {
				t.Errorf("stopped container: %s", txt)
			}
			res = f.call(t, ctx, ToolMetricsHistory, map[string]any{"node": "pve1", "storage": "local-lvm", "timeframe": "week", "cf": "MAX"})
			if txt := firstLine(text(t, res)); res.IsError || !strings.Contains(txt, "storage local-lvm on pve1, last week (max): used avg ") || !strings.Contains(txt, "of 800.0 GiB") {
				t.Errorf("storage: %s", txt)
			}
			// Refusals send nothing.
			f.fake.ResetRequests()
			for _, args := range []map[string]any{
				{"node": "pve1", "type": "qemu", "timeframe": "day"},
				{"node": "pve1", "storage": "local", "vmid": 100, "type": "qemu", "timeframe": "day"},
				{"node": "pve1", "timeframe": "decade"},
				{"node": "pve3", "timeframe": "day"},
				{"node": "pve1", "timeframe": "day", "points": 10},
			} {
				if res := f.call(t, ctx, ToolMetricsHistory, args); !res.IsError {
					t.Errorf("%v: accepted: %s", args, firstLine(text(t, res)))
				}
			}
			if n := len(f.fake.Requests()); n != 0 {
				t.Errorf("%d upstream requests after refusals", n)
			}
		})
	}
}

// TestMetricsHistoryLargestAnswer measures the largest answers (a year of
// every series, MAX, of a PVE 9 node and guest) and holds them to a bound
// a model's context affords: smaller than one list_guests page of 200
// guests (49 KB structured, docs/ARCHITECTURE.md).
func TestMetricsHistoryLargestAnswer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, ctx, "", fixtureConfig{cluster: metricsCluster()})
	for _, args := range []map[string]any{
		{"node": "pve1", "timeframe": "year", "cf": "MAX"},
		{"node": "pve1", "type": "qemu", "vmid": 102, "timeframe": "year", "cf": "MAX"},
	} {
		res := f.call(t, ctx, ToolMetricsHistory, args)
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		txt := text(t, res)
		t.Logf("%v: structuredContent %d B, text %d B", args, len(sc), len(txt))
		if len(sc) > 24<<10 || len(txt) > 16<<10 {
			t.Errorf("%v: structuredContent %d B, text %d B: beyond 24 KiB / 16 KiB", args, len(sc), len(txt))
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
