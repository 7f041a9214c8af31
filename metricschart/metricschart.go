package metricschart

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-analyze/charts"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Width and Height are the chart's size in pixels.
const (
	Width  = 800
	Height = 400
)

// ErrNoData is returned for a history with no points to draw (no RRD
// file, a stopped guest, a storage never active).
var ErrNoData = errors.New("metricschart: no usage data to draw")

// line is one drawn series: its legend name and values in percent, with
// charts' null value where a point lacks it.
type line struct {
	name   string
	values []float64
}

// PNG draws res as a PNG of [Width] × [Height]: a node's or guest's CPU
// (cpu, already relative to maxcpu) and memory (mem of maxmem, memused of
// memtotal; PVE 9's host-side memhost too) in percent, a storage's used of
// total, one point per downsampled bucket, on a time axis labeled in UTC.
func PNG(res *proxmoxsafe.MetricsHistoryResult) ([]byte, error) {
	if res == nil || len(res.Points) == 0 {
		return nil, ErrNoData
	}
	capacity := map[string]float64{}
	for _, s := range res.Series {
		capacity[s.Name] = s.Max
	}
	var lines []line
	add := func(name, field, of string, scale float64) {
		if of != "" {
			if capacity[of] <= 0 {
				return
			}
			scale = 100 / capacity[of]
		}
		l := line{name: name, values: make([]float64, len(res.Points))}
		seen := false
		for i, p := range res.Points {
			v, ok := p[field]
			if !ok {
				l.values[i] = charts.GetNullValue()
				continue
			}
			seen = true
			l.values[i] = v * scale
		}
		if seen {
			lines = append(lines, l)
		}
	}
	add("CPU %", "cpu", "", 100)
	add("memory % of "+human(capacity["maxmem"]), "mem", "maxmem", 0)
	add("host memory %", "memhost", "maxmem", 0)
	add("memory % of "+human(capacity["memtotal"]), "memused", "memtotal", 0)
	add("used % of "+human(capacity["total"]), "used", "total", 0)
	if len(lines) == 0 {
		return nil, ErrNoData
	}
	labels := make([]string, len(res.Points))
	layout := "15:04"
	if res.End-res.Start > 2*86400 {
		layout = "Jan 2"
	}
	if res.End-res.Start > 120*86400 {
		layout = "Jan 2006"
	}
	for i, p := range res.Points {
		labels[i] = time.Unix(int64(p["time"]), 0).UTC().Format(layout)
	}
	values := make([][]float64, len(lines))
	names := make([]string, len(lines))
	for i, l := range lines {
		values[i], names[i] = l.values, l.name
	}
	opt := charts.NewLineChartOptionWithData(values)
	opt.Title = charts.TitleOption{Text: title(res), FontStyle: charts.NewFontStyleWithSize(13)}
	opt.Legend = charts.LegendOption{SeriesNames: names, Offset: charts.OffsetStr{Left: charts.PositionRight, Top: "28"}, FontStyle: charts.NewFontStyleWithSize(10)}
	opt.XAxis = charts.XAxisOption{Labels: labels, LabelCount: 8, Title: "time (UTC)", BoundaryGap: charts.Ptr(false)}
	opt.YAxis = []charts.YAxisOption{{Min: charts.Ptr(0.0), Max: charts.Ptr(100.0), Unit: 20, Title: "percent",
		ValueFormatter: func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) + "%" }}}
	opt.Symbol = charts.Symbol{Shape: charts.SymbolNone}
	opt.LineStrokeWidth = 2
	p := charts.NewPainter(charts.PainterOptions{OutputFormat: charts.ChartOutputPNG, Width: Width, Height: Height})
	if err := p.LineChart(opt); err != nil {
		return nil, fmt.Errorf("metricschart: %w", err)
	}
	return p.Bytes()
}

// title names what the chart shows: "VM 102 on pve1 — last day (average, 24m points)".
func title(res *proxmoxsafe.MetricsHistoryResult) string {
	what := "node " + res.Node
	switch res.Target {
	case "qemu":
		what = "VM " + strconv.Itoa(res.VMID) + " on " + res.Node
	case "lxc":
		what = "container " + strconv.Itoa(res.VMID) + " on " + res.Node
	case "storage":
		what = "storage " + res.Storage + " on " + res.Node
	}
	cf := "average"
	if res.CF == "MAX" {
		cf = "maximum"
	}
	return fmt.Sprintf("%s, last %s (%s per %s, until %s)", what, res.Timeframe, cf,
		proxmoxsafe.StepText(res.Bucket), time.Unix(res.End, 0).UTC().Format("2006-01-02 15:04 UTC"))
}

func human(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " " + units[i]
}
