package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// metricsHistoryTool declares the metrics_history tool.
func metricsHistoryTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolMetricsHistory,
		Title:       "Metrics history",
		Description: "RRD history of a node, guest (type+vmid) or storage: per series min/avg/max/last and time of max; " + strconv.Itoa(proxmoxsafe.DefaultMetricsPoints) + " points.",
	}, ops(proxmoxsafe.OpNodeMetrics, proxmoxsafe.OpGuestMetrics, proxmoxsafe.OpStorageMetrics), (*adapter).metricsHistory, func() map[string]string {
		return map[string]string{
			"series": "Per field (Proxmox's names; unit ratio = 0-1, bytes/s = rate): summary over every row.",
			"points": "At most " + strconv.Itoa(proxmoxsafe.DefaultMetricsPoints) + " rows, oldest first: time (Unix s) and each varying series.",
			"notes":  "What the data lacks: rows without data, mixed steps after an upgrade to PVE 9.",
		}
	})
}

func (a *adapter) metricsHistory(ctx context.Context, in proxmoxsafe.MetricsHistoryInput) (string, *proxmoxsafe.MetricsHistoryResult, error) {
	res, err := a.client.MetricsHistory(ctx, in)
	if err != nil {
		return "", nil, err
	}
	return metricsSummary(res), res, nil
}

// metricsSummary is the one-line text of a metrics history: what, over
// which timeframe, and the few figures a person looks at first (CPU,
// memory, network, disk, pressure, or a storage's usage) with their
// peaks. metrics_chart writes it beside the picture.
func metricsSummary(res *proxmoxsafe.MetricsHistoryResult) string {
	what := metricsTargetLabel(res)
	head := fmt.Sprintf("%s, last %s (%s)", what, res.Timeframe, strings.ToLower(res.CF))
	if res.Message != "" {
		return head + ": " + clean(res.Message, 400)
	}
	m := map[string]proxmoxsafe.MetricSeries{}
	for _, s := range res.Series {
		m[s.Name] = s
	}
	var parts []string
	add := func(label, name, of string) {
		s, ok := m[name]
		if !ok {
			return
		}
		p := fmt.Sprintf("%s avg %s, max %s at %s", label, metricValue(s.Unit, s.Avg), metricValue(s.Unit, s.Max), metricTime(s.MaxTime))
		if c, ok := m[of]; ok && c.Max > 0 {
			p += " of " + metricValue(c.Unit, c.Max)
		}
		parts = append(parts, p)
	}
	add("CPU", "cpu", "")
	add("memory", "mem", "maxmem")
	add("memory", "memused", "memtotal")
	add("host memory", "memhost", "")
	add("net in", "netin", "")
	add("net out", "netout", "")
	add("disk read", "diskread", "")
	add("disk write", "diskwrite", "")
	add("IO pressure", "pressureiosome", "")
	add("used", "used", "total")
	if len(parts) == 0 {
		parts = append(parts, "no usage data")
	}
	tail := fmt.Sprintf("%d rows", res.Rows)
	if res.EmptyRows > 0 {
		tail += fmt.Sprintf(" (%d without data)", res.EmptyRows)
	}
	if len(res.Points) > 0 {
		tail += fmt.Sprintf(", %d points of %s", len(res.Points), proxmoxsafe.StepText(res.Bucket))
	}
	if len(res.Steps) > 1 {
		tail += ", mixed steps (upgraded to PVE 9)"
	}
	return head + ": " + strings.Join(parts, "; ") + "; " + tail
}

// metricsTargetLabel names what a history is of: "node pve1", "VM 100 on
// pve1", "container 200 on pve1", "storage local on pve1".
func metricsTargetLabel(res *proxmoxsafe.MetricsHistoryResult) string {
	switch res.Target {
	case "qemu":
		return "VM " + strconv.Itoa(res.VMID) + " on " + res.Node
	case "lxc":
		return "container " + strconv.Itoa(res.VMID) + " on " + res.Node
	case "storage":
		return "storage " + res.Storage + " on " + res.Node
	}
	return "node " + res.Node
}

// metricValue writes a value in its unit for people: 12.3%, 3.2 GiB,
// 1.5 MB/s.
func metricValue(unit string, v float64) string {
	switch unit {
	case "ratio":
		return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
	case "bytes":
		return humanBytes(v, 1024, []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"})
	case "bytes/s":
		return humanBytes(v, 1000, []string{"B/s", "kB/s", "MB/s", "GB/s", "TB/s"})
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func humanBytes(v, base float64, units []string) string {
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " " + units[0]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

// metricTime writes a row's time in UTC, to the minute.
func metricTime(t int64) string {
	return time.Unix(t, 0).UTC().Format("2006-01-02 15:04 UTC")
}
