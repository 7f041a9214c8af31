package proxmoxsafe

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// The operations of [Client.MetricsHistory], one per kind of RRD: each has
// its own route and privilege.
const (
	// OpNodeMetrics is the name of [Client.NodeMetrics]
	// ([Client.MetricsHistory] of a node).
	OpNodeMetrics Operation = "NodeMetrics"
	// OpGuestMetrics is the name of [Client.GuestMetrics].
	OpGuestMetrics Operation = "GuestMetrics"
	// OpStorageMetrics is the name of [Client.StorageMetrics].
	OpStorageMetrics Operation = "StorageMetrics"
)

var (
	// nodeMetricsOp declares [Client.NodeMetrics].
	nodeMetricsOp = operation{info: OperationInfo{
		Name: OpNodeMetrics, Method: "GET", Route: "/nodes/{node}/rrddata", NodeTargeted: true,
		Privileges: []Privilege{{Path: pathNode, Name: "Sys.Audit"}},
	}}
	// guestMetricsOp declares [Client.GuestMetrics].
	guestMetricsOp = operation{info: OperationInfo{
		Name: OpGuestMetrics, Method: "GET", Route: "/nodes/{node}/{type}/{vmid}/rrddata", NodeTargeted: true,
		Privileges: []Privilege{{Path: pathVMs, Name: "VM.Audit"}},
	}}
	// storageMetricsOp declares [Client.StorageMetrics].
	storageMetricsOp = operation{info: OperationInfo{
		Name: OpStorageMetrics, Method: "GET", Route: "/nodes/{node}/storage/{storage}/rrddata", NodeTargeted: true,
		Privileges: []Privilege{{Path: pathStorage, Name: "Datastore.Audit", Note: "Datastore.AllocateSpace also suffices"}},
	}}
)

// Bounds of a metrics history answer. A year of a PVE 9 guest is 1,440
// rows of 17 fields; the answer keeps every series' summary and at most
// Points points per series, so it fits a model's context.
const (
	// DefaultMetricsPoints is the number of points per series when
	// [MetricsHistoryInput.Points] is 0.
	DefaultMetricsPoints = 60
	// MaxMetricsPoints is the most points per series an answer carries.
	MaxMetricsPoints = 200
	// maxMetricsRows refuses an answer with more rows than any RRA has
	// (PVE 9: 1,440 per timeframe, plus the pre-upgrade rows it splices in).
	maxMetricsRows = 10_000
	// maxUnknownSeries bounds the fields of a row that no Proxmox
	// release has had (metricOrder has them all): a newer release's are
	// kept up to this many, in name order.
	maxUnknownSeries = 8
)

// MetricsWindow is the timeframe and consolidation of a metrics history.
type MetricsWindow struct {
	// Timeframe is how far back: an hour (1-minute steps) … a year (PVE 9:
	// 6-hour steps; before 9: 1 week).
	Timeframe string `json:"timeframe" validate:"required,oneof=hour day week month year"`
	// CF is the consolidation per step: AVERAGE (default) or MAX.
	CF string `json:"cf,omitempty" validate:"omitempty,oneof=AVERAGE MAX"`
	// Points caps the points per series; 0 means [DefaultMetricsPoints],
	// at most [MaxMetricsPoints]. The MCP tool always uses the default:
	// a model that wants finer points asks for a shorter timeframe.
	Points int `json:"-" validate:"min=0,max=200"`
}

// MetricsHistoryInput names what [Client.MetricsHistory] reads: a node; a
// guest on it (Type and VMID); or a storage on it (Storage).
type MetricsHistoryInput struct {
	// Node must be on the policy's allowlist.
	Node string    `json:"node" validate:"required,pve_node"`
	Type GuestType `json:"type,omitempty" validate:"omitempty,oneof=qemu lxc"`
	VMID int       `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Storage selects that storage's usage history as node sees it.
	Storage string `json:"storage,omitempty" validate:"omitempty,pve_storage"`
	MetricsWindow
}

// NodeMetricsInput names the node [Client.NodeMetrics] reads.
type NodeMetricsInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	MetricsWindow
}

// GuestMetricsInput names the guest [Client.GuestMetrics] reads.
type GuestMetricsInput struct {
	GuestRef
	MetricsWindow
}

// StorageMetricsInput names the storage [Client.StorageMetrics] reads, as
// Node sees it.
type StorageMetricsInput struct {
	Node    string `json:"node" validate:"required,pve_node"`
	Storage string `json:"storage" validate:"required,pve_storage"`
	MetricsWindow
}

// NodeMetrics is [Client.MetricsHistory] of a node.
func (c *Client) NodeMetrics(ctx context.Context, in NodeMetricsInput) (*MetricsHistoryResult, error) {
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, OpNodeMetrics, time.Now(), err)
	}
	return c.MetricsHistory(ctx, MetricsHistoryInput{Node: in.Node, MetricsWindow: in.MetricsWindow})
}

// GuestMetrics is [Client.MetricsHistory] of a VM or container.
func (c *Client) GuestMetrics(ctx context.Context, in GuestMetricsInput) (*MetricsHistoryResult, error) {
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, OpGuestMetrics, time.Now(), err)
	}
	return c.MetricsHistory(ctx, MetricsHistoryInput{Node: in.Node, Type: in.Type, VMID: in.VMID, MetricsWindow: in.MetricsWindow})
}

// StorageMetrics is [Client.MetricsHistory] of a storage.
func (c *Client) StorageMetrics(ctx context.Context, in StorageMetricsInput) (*MetricsHistoryResult, error) {
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, OpStorageMetrics, time.Now(), err)
	}
	return c.MetricsHistory(ctx, MetricsHistoryInput{Node: in.Node, Storage: in.Storage, MetricsWindow: in.MetricsWindow})
}

// target returns the kind of history the input names.
func (in MetricsHistoryInput) target() string {
	switch {
	case in.Storage != "":
		return "storage"
	case in.Type != "":
		return string(in.Type)
	}
	return "node"
}

// validateMetricsTarget: a guest needs both type and vmid; a storage
// neither.
func validateMetricsTarget(sl validator.StructLevel) {
	in := sl.Current().Interface().(MetricsHistoryInput)
	switch {
	case in.Type != "" && in.VMID == 0:
		sl.ReportError(in.VMID, "vmid", "VMID", "metrics_guest", "")
	case in.Type == "" && in.VMID != 0:
		sl.ReportError(in.Type, "type", "Type", "metrics_guest", "")
	}
	if in.Storage != "" && (in.Type != "" || in.VMID != 0) {
		sl.ReportError(in.Storage, "storage", "Storage", "metrics_storage", "")
	}
}

// metricsProblems are the plain words of the cross-field rules.
var metricsProblems = map[string]string{
	"metrics_guest":   "type and vmid go together (a guest's history)",
	"metrics_storage": "cannot be combined with type or vmid (a storage's history is the storage's)",
}

// MetricsHistoryResult is a summary of one RRD over a timeframe, with its
// series downsampled to a bounded number of points.
type MetricsHistoryResult struct {
	// Target is node, qemu, lxc or storage.
	Target    string `json:"target"`
	Node      string `json:"node"`
	VMID      int    `json:"vmid,omitempty"`
	Storage   string `json:"storage,omitempty"`
	Timeframe string `json:"timeframe"`
	CF        string `json:"cf"`
	// Message says why there is no history (no RRD file yet: a new guest,
	// or none of that id); Series and Points are then empty.
	Message string `json:"message,omitempty"`
	// Start and End are the first and last row's time, Unix seconds.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Rows counts the rows Proxmox returned; EmptyRows those holding only
	// a time (no data for that step: just booted, stopped, offline).
	Rows      int `json:"rows"`
	EmptyRows int `json:"empty_rows"`
	// Steps are the distinct intervals between rows in seconds, coarsest
	// first: one, or two after an upgrade from PVE 8 to 9 (the old
	// file's rows come first).
	Steps []int64 `json:"steps"`
	// Bucket is the seconds one point covers.
	Bucket int64          `json:"bucket"`
	Series []MetricSeries `json:"series"`
	// Points are the downsampled rows, oldest first: "time" (the bucket's
	// start) and each varying series' value (the mean of its rows, the
	// maximum with cf MAX). A series that never changes (a capacity) is
	// only in Series. A bucket without data has no point.
	Points []MetricPoint `json:"points"`
	// Notes explain what the data lacks, in plain words.
	Notes []string `json:"notes"`
}

// MetricSeries summarizes one field of the RRD over the whole timeframe
// (every row, not the downsampled points).
type MetricSeries struct {
	// Name is Proxmox's field: cpu, mem, memhost, netin, pressureiosome, …
	Name string `json:"name"`
	// Unit: ratio (cpu, iowait: 0-1, cpu of maxcpu), bytes, bytes/s, cpus,
	// load, psi (pressure stall, as Proxmox stores it) or "" (unknown).
	Unit string  `json:"unit"`
	Min  float64 `json:"min"`
	// Avg weighs each row by the time it covers (rows of mixed steps).
	Avg  float64 `json:"avg"`
	Max  float64 `json:"max"`
	Last float64 `json:"last"`
	// MaxTime is when Max was reached (the row's time, Unix seconds).
	MaxTime int64 `json:"max_time"`
	// Samples counts the rows that have the field.
	Samples int `json:"samples"`
}

// MetricPoint is one downsampled row: "time" and a value per series.
type MetricPoint map[string]float64

// MarshalJSON writes time first, then the series in the order of
// [MetricsHistoryResult.Series] (a person reads cpu before pressure; the
// text form's table takes its columns from this order).
func (p MetricPoint) MarshalJSON() ([]byte, error) {
	keys := slices.SortedFunc(maps.Keys(p), compareMetricNames)
	b := make([]byte, 0, 16*len(keys)+2)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		v := p[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return append(b, '}'), nil
}

// compareMetricNames orders fields: time, the known fields as a person
// reads them (metricOrder), then unknown ones by name.
func compareMetricNames(a, b string) int {
	rank := func(n string) int {
		if n == "time" {
			return -1
		}
		if i := slices.Index(metricOrder, n); i >= 0 {
			return i
		}
		return len(metricOrder)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}

// metricOrder and metricUnits: the known fields of PVE 8 and 9 RRDs
// (pvecluster pmxcfs/status.c), in the order a person reads them.
var metricOrder = []string{
	"cpu", "maxcpu", "iowait", "loadavg",
	"mem", "memused", "memhost", "memavailable", "maxmem", "memtotal", "arcsize", "swapused", "swaptotal",
	"netin", "netout", "diskread", "diskwrite",
	"disk", "maxdisk", "rootused", "roottotal", "used", "total",
	"pressurecpusome", "pressurecpufull", "pressureiosome", "pressureiofull", "pressurememorysome", "pressurememoryfull",
}

func metricUnit(name string) string {
	switch name {
	case "cpu", "iowait":
		return "ratio"
	case "maxcpu":
		return "cpus"
	case "loadavg":
		return "load"
	case "netin", "netout", "diskread", "diskwrite":
		return "bytes/s"
	}
	if strings.HasPrefix(name, "pressure") {
		return "psi"
	}
	if slices.Contains(metricOrder, name) {
		return "bytes"
	}
	return ""
}

var metricNameRe = lazyre.New(`^[a-z][a-z0-9_]{0,31}$`)

// metricRows is an rrddata answer: at most maxMetricsRows rows, each a
// flat object of numbers.
type metricRows []map[string]json.RawMessage

func (r *metricRows) UnmarshalJSON(data []byte) error {
	if more, counted := moreRowsThan(data, maxMetricsRows); more || !counted {
		return fmt.Errorf("the metrics history holds more than %d rows or nests deeper than any real Proxmox answer; it was not decoded", maxMetricsRows)
	}
	return json.Unmarshal(data, (*[]map[string]json.RawMessage)(r))
}

// MetricsHistory reads a node's, a guest's or a storage's RRD history
// (GET …/rrddata) for a timeframe and summarizes each series: minimum,
// time-weighted average, maximum with its time, last value. Points
// carries the varying series downsampled to at most Points buckets of
// equal time, so a year of data stays small.
//
// It handles what real answers hold: rows with only a time (no data for
// that step: a node minutes after boot, a stopped guest whose rows keep
// only maxcpu, maxmem, maxdisk and disk, an offline node); rows of two
// steps and field sets after an upgrade from PVE 8 to 9; no RRD file at
// all (500 "RRD error"), which is a result with Message, not an error.
// The node must be on the allowlist; Proxmox does not check that a guest
// lives on it (guest RRDs are keyed by VMID).
func (c *Client) MetricsHistory(ctx context.Context, in MetricsHistoryInput) (*MetricsHistoryResult, error) {
	start := time.Now()
	op := map[string]Operation{"node": OpNodeMetrics, "storage": OpStorageMetrics}[in.target()]
	if op == "" {
		op = OpGuestMetrics
	}
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	if err := c.policy.checkNode(in.Node); err != nil {
		return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
	}
	cf := cmp.Or(in.CF, "AVERAGE")
	var path string
	switch in.target() {
	case "node":
		path = pve.Path("nodes", in.Node, "rrddata")
	case "storage":
		path = pve.Path("nodes", in.Node, "storage", in.Storage, "rrddata")
	default:
		path = pve.Path("nodes", in.Node, string(in.Type), strconv.Itoa(in.VMID), "rrddata")
	}
	res := &MetricsHistoryResult{Target: in.target(), Node: in.Node, VMID: in.VMID, Storage: in.Storage,
		Timeframe: in.Timeframe, CF: cf, Steps: []int64{}, Series: []MetricSeries{}, Points: []MetricPoint{}, Notes: []string{}}
	var rows metricRows
	if err := c.get(ctx, path, url.Values{"timeframe": {in.Timeframe}, "cf": {cf}}, &rows); err != nil {
		if msg, ok := rrdAbsent(err); ok {
			res.Message = msg
			c.logged(ctx, op, start, nil, nodeAttr(in.Node))
			return res, nil
		}
		return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
	}
	summarizeMetrics(res, rows, cf == "MAX", cmp.Or(in.Points, DefaultMetricsPoints))
	c.logged(ctx, op, start, nil, nodeAttr(in.Node))
	return res, nil
}

// rrdAbsent recognizes pmxcfs's answer for a key without an RRD file.
func rrdAbsent(err error) (string, bool) {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusInternalServerError || !strings.Contains(ae.Message, "RRD error") {
		return "", false
	}
	return "Proxmox has no metrics history for this yet (no RRD file: a guest or storage created moments ago, or no such id). Proxmox: " +
		line(ae.Message, 256), true
}

// metricSample is one row's value of one field and the time it covers.
type metricSample struct {
	t int64
	v float64
	w float64 // seconds the row stands for
}

// summarizeMetrics fills res from the rows: the summaries from every row,
// the points from equal-time buckets.
func summarizeMetrics(res *MetricsHistoryResult, rows metricRows, peak bool, points int) {
	type row struct {
		t      int64
		fields map[string]float64
	}
	parsed := make([]row, 0, len(rows))
	dropped := 0
	unknown := map[string]bool{}
	for _, r := range rows {
		var t pve.Int
		raw, ok := r["time"]
		if !ok || json.Unmarshal(raw, &t) != nil || t <= 0 {
			dropped++
			continue
		}
		fs := map[string]float64{}
		// Known fields always; unknown ones (a newer Proxmox) up to a
		// bound, in name order so the same ones are kept on every row.
		keys := slices.Sorted(maps.Keys(r))
		for _, k := range keys {
			raw := r[k]
			if k == "time" || !metricNameRe.MatchString(k) || bytes.Equal(raw, []byte("null")) {
				continue
			}
			isKnown := slices.Contains(metricOrder, k)
			if !isKnown && !unknown[k] && len(unknown) == maxUnknownSeries {
				continue
			}
			var v pve.Float
			if json.Unmarshal(raw, &v) != nil || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				continue
			}
			if !isKnown {
				unknown[k] = true
			}
			fs[k] = float64(v)
		}
		parsed = append(parsed, row{t: int64(t), fields: fs})
	}
	slices.SortStableFunc(parsed, func(a, b row) int { return cmp.Compare(a.t, b.t) })
	res.Rows = len(rows)
	if len(parsed) == 0 {
		res.Notes = append(res.Notes, "Proxmox returned no rows.")
		return
	}
	res.Start, res.End = parsed[0].t, parsed[len(parsed)-1].t
	// Each row covers the interval up to it (RRD rows are the end of
	// their step); the first row takes the next one's step.
	steps := map[int64]bool{}
	weights := make([]float64, len(parsed))
	for i := range parsed {
		var d int64
		switch {
		case i > 0:
			d = parsed[i].t - parsed[i-1].t
		case len(parsed) > 1:
			d = parsed[1].t - parsed[0].t
		}
		if i > 0 && d > 0 {
			steps[d] = true
		}
		weights[i] = float64(max(d, 1))
	}
	for s := range steps {
		res.Steps = append(res.Steps, s)
	}
	slices.SortFunc(res.Steps, func(a, b int64) int { return cmp.Compare(b, a) })
	if len(res.Steps) > 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("Rows come at %d different steps (%s): the older rows are from the RRD before an upgrade to PVE 9, which Proxmox splices in; averages weigh each row by the time it covers.",
			len(res.Steps), stepList(res.Steps)))
	}
	samples := map[string][]metricSample{}
	for i, r := range parsed {
		if len(r.fields) == 0 {
			res.EmptyRows++
		}
		for k, v := range r.fields {
			samples[k] = append(samples[k], metricSample{t: r.t, v: v, w: weights[i]})
		}
	}
	if res.EmptyRows > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d rows hold only a time: Proxmox has no data for those steps (just booted or created, stopped, or offline).", res.EmptyRows, len(parsed)))
	}
	if dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d rows without a valid time were left out.", dropped))
	}
	names := make([]string, 0, len(samples))
	for k := range samples {
		names = append(names, k)
	}
	slices.SortFunc(names, compareMetricNames)
	varying := []string{}
	for _, name := range names {
		ss := samples[name]
		s := MetricSeries{Name: name, Unit: metricUnit(name), Min: ss[0].v, Max: ss[0].v, MaxTime: ss[0].t, Samples: len(ss)}
		var sum, wsum float64
		for _, x := range ss {
			if x.v < s.Min {
				s.Min = x.v
			}
			if x.v > s.Max {
				s.Max, s.MaxTime = x.v, x.t
			}
			sum += x.v * x.w
			wsum += x.w
		}
		s.Avg = round(sum/wsum, 6)
		s.Min, s.Max, s.Last = round(s.Min, 6), round(s.Max, 6), round(ss[len(ss)-1].v, 6)
		res.Series = append(res.Series, s)
		if s.Min != s.Max {
			varying = append(varying, name)
		}
	}
	if !slices.Contains(names, "cpu") && !slices.Contains(names, "used") {
		why := "the RRD has no data for this timeframe"
		if res.Target == "qemu" || res.Target == "lxc" {
			why = "the guest was not running (a stopped guest's rows keep only its capacities)"
		}
		res.Notes = append(res.Notes, "No usage series: "+why+".")
	}
	finest := int64(1)
	if len(res.Steps) > 0 {
		finest = res.Steps[len(res.Steps)-1]
	}
	res.Points, res.Bucket = downsample(parsed[0].t, res.End, points, finest, varying, samples, peak)
}

// downsample averages (or, for peak, takes the maximum of) each series in
// buckets of equal time from first, each a whole number of the finest
// step, at most n of them; a bucket with no value is left out.
func downsample(first, last int64, n int, finest int64, names []string, samples map[string][]metricSample, peak bool) ([]MetricPoint, int64) {
	finest = max(finest, 1)
	rows := (last-first)/finest + 1
	bucket := (rows + int64(n) - 1) / int64(n) * finest
	nb := int((last-first)/bucket + 1)
	type acc struct{ sum, w, max float64 }
	accs := make([]map[string]*acc, nb)
	for _, name := range names {
		for _, x := range samples[name] {
			i := int((x.t - first) / bucket)
			if accs[i] == nil {
				accs[i] = map[string]*acc{}
			}
			a := accs[i][name]
			if a == nil {
				a = &acc{max: x.v}
				accs[i][name] = a
			}
			a.sum += x.v * x.w
			a.w += x.w
			a.max = max(a.max, x.v)
		}
	}
	out := []MetricPoint{}
	for i, m := range accs {
		if len(m) == 0 {
			continue
		}
		p := MetricPoint{"time": float64(first + int64(i)*bucket)}
		for name, a := range m {
			v := a.sum / a.w
			if peak {
				v = a.max
			}
			p[name] = round(v, 4)
		}
		out = append(out, p)
	}
	return out, bucket
}

// round keeps sig significant digits of a fraction (every digit is a
// token); whole numbers (bytes, counts) stay exact below 2^53, as are
// points, which are approximations anyway, to sig digits.
func round(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) || (v == math.Trunc(v) && math.Abs(v) < 1<<53 && sig > 4) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	return r
}

func stepList(steps []int64) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = StepText(s)
	}
	return strings.Join(parts, ", ")
}

// StepText writes a step or bucket of seconds the short way: 1m, 30m,
// 6h, 7d, 90s.
func StepText(sec int64) string {
	switch {
	case sec > 0 && sec%86400 == 0:
		return strconv.FormatInt(sec/86400, 10) + "d"
	case sec > 0 && sec%3600 == 0:
		return strconv.FormatInt(sec/3600, 10) + "h"
	case sec > 0 && sec%60 == 0:
		return strconv.FormatInt(sec/60, 10) + "m"
	}
	return strconv.FormatInt(sec, 10) + "s"
}
