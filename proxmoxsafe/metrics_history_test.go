package proxmoxsafe_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// metricsNow is the fixed end of the fake's history in these tests:
// 2026-03-02 13:37:00 UTC.
var metricsNow = time.Unix(1772458620, 0)

func metricsCluster(version string, rrd *proxmoxtest.RRD) *proxmoxtest.Cluster {
	c := testCluster()
	c.Version = version
	if rrd == nil {
		rrd = &proxmoxtest.RRD{}
	}
	rrd.Now = func() time.Time { return metricsNow }
	c.RRD = rrd
	return c
}

func seriesByName(res *proxmoxsafe.MetricsHistoryResult) map[string]proxmoxsafe.MetricSeries {
	m := map[string]proxmoxsafe.MetricSeries{}
	for _, s := range res.Series {
		m[s.Name] = s
	}
	return m
}

// checkSummaries: every summary is consistent with itself and the span.
func checkSummaries(t *testing.T, res *proxmoxsafe.MetricsHistoryResult) {
	t.Helper()
	for _, s := range res.Series {
		if s.Min > s.Avg+1e-9*max(1, s.Avg) || s.Avg > s.Max+1e-9*max(1, s.Max) || s.Last < s.Min || s.Last > s.Max {
			t.Errorf("%s: min %v avg %v max %v last %v", s.Name, s.Min, s.Avg, s.Max, s.Last)
		}
		if s.MaxTime < res.Start || s.MaxTime > res.End || s.Samples == 0 {
			t.Errorf("%s: max_time %d outside %d…%d, samples %d", s.Name, s.MaxTime, res.Start, res.End, s.Samples)
		}
	}
	for i, p := range res.Points {
		if i > 0 && p["time"] <= res.Points[i-1]["time"] {
			t.Errorf("points out of order at %d", i)
		}
	}
}

func TestMetricsHistoryNodeHour(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.requests()
	if got := reqLines(reqs); !slices.Equal(got, []string{"GET /nodes/pve1/rrddata"}) ||
		reqs[0].Query.Get("timeframe") != "hour" || reqs[0].Query.Get("cf") != "AVERAGE" {
		t.Fatalf("requests = %v %v", got, reqs[0].Query)
	}
	// PVE 9: 60 one-minute rows, the trailing time-only row dropped.
	if res.Target != "node" || res.Rows != 59 || res.EmptyRows != 0 || !slices.Equal(res.Steps, []int64{60}) || res.CF != "AVERAGE" {
		t.Errorf("result = %+v", res)
	}
	m := seriesByName(res)
	for _, name := range []string{"cpu", "memused", "memavailable", "netin", "netout", "pressurecpusome", "pressureiofull", "pressurememorysome"} {
		if _, ok := m[name]; !ok {
			t.Errorf("no %s series: %v", name, res.Series)
		}
	}
	if m["cpu"].Unit != "ratio" || m["netin"].Unit != "bytes/s" || m["memused"].Unit != "bytes" || m["maxcpu"].Min != 8 {
		t.Errorf("units/capacity: %+v %+v %+v %+v", m["cpu"], m["netin"], m["memused"], m["maxcpu"])
	}
	if res.Series[0].Name != "cpu" {
		t.Errorf("first series %s, want cpu", res.Series[0].Name)
	}
	if len(res.Points) != 59 || res.Bucket != 60 {
		t.Errorf("%d points of %d s", len(res.Points), res.Bucket)
	}
	// Capacities never change: only in the summaries.
	if _, ok := res.Points[0]["maxcpu"]; ok {
		t.Error("a constant series is in the points")
	}
	if _, ok := res.Points[0]["cpu"]; !ok {
		t.Error("cpu is not in the points")
	}
	checkSummaries(t, res)
}

// TestMetricsHistoryYearBounded: a year of a PVE 9 guest (1,440 rows)
// comes back as at most Points points per series.
func TestMetricsHistoryYearBounded(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	for _, tc := range []struct{ points, want int }{{0, proxmoxsafe.DefaultMetricsPoints}, {proxmoxsafe.MaxMetricsPoints, proxmoxsafe.MaxMetricsPoints}, {7, 7}} {
		res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "year", CF: "MAX", Points: tc.points}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 1439 || len(res.Points) > tc.want || len(res.Points) < tc.want*3/4 || !slices.Equal(res.Steps, []int64{21600}) {
			t.Errorf("points=%d: rows %d, %d points, steps %v", tc.points, res.Rows, len(res.Points), res.Steps)
		}
		m := seriesByName(res)
		if _, ok := m["memhost"]; !ok || m["pressurecpufull"].Unit != "psi" || m["diskwrite"].Samples != 1439 {
			t.Errorf("series = %+v", res.Series)
		}
		// MAX keeps the peak: no point exceeds the series' maximum and
		// one bucket holds it.
		var top float64
		for _, p := range res.Points {
			top = max(top, p["cpu"])
		}
		if top > m["cpu"].Max || top < m["cpu"].Max*0.999 {
			t.Errorf("cpu: points' peak %v, series max %v", top, m["cpu"].Max)
		}
		checkSummaries(t, res)
	}
}

func TestMetricsHistoryStoppedGuest(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve2", Type: "lxc", VMID: 201, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}})
	if err != nil {
		t.Fatal(err)
	}
	m := seriesByName(res)
	if _, ok := m["cpu"]; ok || len(res.Series) != 4 || len(res.Points) != 0 {
		t.Errorf("series %v, %d points", res.Series, len(res.Points))
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "not running") }) {
		t.Errorf("notes = %v", res.Notes)
	}
}

// TestMetricsHistoryRecordedStopped reads the recorded answer of a VM
// stopped for the hour (PVE 7.4, go-proxmox's mock).
func TestMetricsHistoryRecordedStopped(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/recorded/pve7-qemu-rrddata-hour-stopped.json")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, metricsCluster("7.4.16", nil), nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/101/rrddata", Body: body})
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 101, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if err != nil {
		t.Fatal(err)
	}
	m := seriesByName(res)
	if res.Rows != 70 || !slices.Equal(res.Steps, []int64{60}) || m["maxmem"].Max != 16777216000 || m["maxcpu"].Last != 4 || len(res.Points) != 0 {
		t.Errorf("result = %+v", res)
	}
	if _, ok := m["cpu"]; ok {
		t.Error("a cpu series from a stopped VM")
	}
}

// TestMetricsHistoryPVE8 has 70 rows, the newest (still filling) one
// holding only time.
func TestMetricsHistoryPVE8(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("8.4.1", nil), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "week"}})
	if err != nil {
		t.Fatal(err)
	}
	m := seriesByName(res)
	if _, ok := m["memhost"]; ok || res.Rows != 70 || res.EmptyRows != 1 || !slices.Equal(res.Steps, []int64{10800}) {
		t.Errorf("rows %d, empty %d, steps %v, series %v", res.Rows, res.EmptyRows, res.Steps, res.Series)
	}
	checkSummaries(t, res)
}

// TestMetricsHistoryJustBooted: a node 8 minutes after boot has 62 rows
// of 70 with only a time (the pve6 recording's shape).
func TestMetricsHistoryJustBooted(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("8.4.1", &proxmoxtest.RRD{Since: map[string]int64{"node/pve1": metricsNow.Unix()/60*60 - 7*60}}), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 70 || res.EmptyRows != 63 || seriesByName(res)["cpu"].Samples != 7 {
		t.Errorf("rows %d, empty %d, cpu %+v", res.Rows, res.EmptyRows, seriesByName(res)["cpu"])
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "63 of 70 rows hold only a time") }) {
		t.Errorf("notes = %v", res.Notes)
	}
	checkSummaries(t, res)
}

// TestMetricsHistoryAfterUpgrade: rows of the pre-9 file (12 h steps, no
// memhost) come first, then 30-minute rows.
func TestMetricsHistoryAfterUpgrade(t *testing.T) {
	t.Parallel()
	upgraded := metricsNow.Add(-10 * 24 * time.Hour).Unix()
	e := newEnvWith(t, metricsCluster("9.1.1", &proxmoxtest.RRD{UpgradedAt: upgraded}), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "month"}})
	if err != nil {
		t.Fatal(err)
	}
	m := seriesByName(res)
	if !slices.Equal(res.Steps[:1], []int64{43200}) || res.Steps[len(res.Steps)-1] != 1800 {
		t.Errorf("steps = %v", res.Steps)
	}
	if m["memhost"].Samples >= m["cpu"].Samples || m["memhost"].Samples < 400 {
		t.Errorf("memhost %d samples, cpu %d", m["memhost"].Samples, m["cpu"].Samples)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "upgrade to PVE 9") }) {
		t.Errorf("notes = %v", res.Notes)
	}
	checkSummaries(t, res)
}

func TestMetricsHistoryStorage(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Storage: "local-lvm", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "month"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /nodes/pve1/storage/local-lvm/rrddata"}) {
		t.Errorf("requests = %v", got)
	}
	m := seriesByName(res)
	if res.Target != "storage" || m["total"].Max != 800<<30 || m["used"].Max > 120<<30*1.02 || len(res.Series) != 2 {
		t.Errorf("result = %+v", res)
	}
	checkSummaries(t, res)
}

// TestMetricsHistoryNoRRD: no RRD file is an answer that says so.
func TestMetricsHistoryNoRRD(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", &proxmoxtest.RRD{Missing: []string{"vm/100"}}), nil)
	for _, in := range []proxmoxsafe.MetricsHistoryInput{
		{Node: "pve1", Type: "qemu", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}},
		{Node: "pve1", Type: "qemu", VMID: 999, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}},
	} {
		res, err := e.client.MetricsHistory(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Message, "no metrics history") || !strings.Contains(res.Message, "RRD error") || len(res.Series) != 0 {
			t.Errorf("%d: result = %+v", in.VMID, res)
		}
	}
}

// TestMetricsHistoryOfflineNode: node rrddata is not proxied; the
// offline node's rows stop when it went away.
func TestMetricsHistoryOfflineNode(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = append(c.Policy.AllowedNodes, "pve3") })
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve3", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.EmptyRows < 29 || res.EmptyRows > 31 || len(res.Notes) == 0 {
		t.Errorf("empty rows %d, notes %v", res.EmptyRows, res.Notes)
	}
	// Storage rrddata is proxied to the node: that fails.
	if _, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve3", Storage: "local", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}}); err == nil {
		t.Error("an offline node's storage history was read")
	}
}

// TestMetricsHistoryRefusals: invalid input and a node off the allowlist
// send nothing.
func TestMetricsHistoryRefusals(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	for name, tc := range map[string]struct {
		in    proxmoxsafe.MetricsHistoryInput
		field string
		want  error
	}{
		"no timeframe":     {proxmoxsafe.MetricsHistoryInput{Node: "pve1"}, "timeframe", proxmoxsafe.ErrInvalidInput},
		"decade":           {proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "decade"}}, "timeframe", proxmoxsafe.ErrInvalidInput},
		"bad cf":           {proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day", CF: "MIN"}}, "cf", proxmoxsafe.ErrInvalidInput},
		"type only":        {proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "vmid", proxmoxsafe.ErrInvalidInput},
		"vmid only":        {proxmoxsafe.MetricsHistoryInput{Node: "pve1", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "type", proxmoxsafe.ErrInvalidInput},
		"storage and vmid": {proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 100, Storage: "local", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "storage", proxmoxsafe.ErrInvalidInput},
		"bad storage":      {proxmoxsafe.MetricsHistoryInput{Node: "pve1", Storage: "../x", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "storage", proxmoxsafe.ErrInvalidInput},
		"too many points":  {proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day", Points: proxmoxsafe.MaxMetricsPoints + 1}}, "Points", proxmoxsafe.ErrInvalidInput},
		"bad type":         {proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "openvz", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "type", proxmoxsafe.ErrInvalidInput},
		"not allowlisted":  {proxmoxsafe.MetricsHistoryInput{Node: "pve3", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}}, "", proxmoxsafe.ErrNotAllowed},
	} {
		e.fake.ResetRequests()
		_, err := e.client.MetricsHistory(t.Context(), tc.in)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
		var ve *proxmoxsafe.ValidationError
		if tc.field != "" && (!errors.As(err, &ve) || !slices.ContainsFunc(ve.Fields, func(f proxmoxsafe.FieldError) bool { return f.Field == tc.field })) {
			t.Errorf("%s: %v does not name %s", name, err, tc.field)
		}
		if n := len(e.requests()); n != 0 {
			t.Errorf("%s: %d upstream requests after a refusal", name, n)
		}
	}
}

// TestMetricsHistoryPrivileges: without Sys.Audit on the node Proxmox
// answers 403, an error.
func TestMetricsHistoryPrivileges(t *testing.T) {
	t.Parallel()
	c := metricsCluster("9.1.1", nil)
	c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/vms": {"VM.Audit"}}
	e := newEnvWith(t, c, nil)
	if _, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}}); !errors.Is(err, proxmoxsafe.ErrForbidden) {
		t.Errorf("node: err = %v", err)
	}
	if _, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 100, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}}); err != nil {
		t.Errorf("guest with VM.Audit: %v", err)
	}
}

// TestMetricsHistoryHostileRows: non-numbers, odd names and a huge number
// of fields do not get through.
func TestMetricsHistoryHostileRows(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range 3 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"time":` + []string{"1772400000", "1772400060", "\"x\""}[i] + `,"cpu":0.5,"Evil\u202e":1,"name":"ignore previous","mem":null`)
		for j := range 40 {
			b.WriteString(`,"f` + string(rune('a'+j%26)) + string(rune('a'+j/26)) + `":1`)
		}
		b.WriteString("}")
	}
	b.WriteString("]}")
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/rrddata", Body: []byte(b.String())})
	res, err := e.client.MetricsHistory(t.Context(), proxmoxsafe.MetricsHistoryInput{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) != 9 || res.Rows != 3 || res.Series[0].Name != "cpu" || res.Series[0].Samples != 2 {
		t.Errorf("series %d (%v), rows %d", len(res.Series), res.Series[0], res.Rows)
	}
	for _, s := range res.Series {
		if s.Name == "name" || s.Name == "mem" || strings.ContainsAny(s.Name, "E\u202e") {
			t.Errorf("series %q kept", s.Name)
		}
	}
}

// TestMetricsTypedMethods: the one-kind methods check their own input
// (a guest needs its type) and read the same history.
func TestMetricsTypedMethods(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, metricsCluster("9.1.1", nil), nil)
	w := proxmoxsafe.MetricsWindow{Timeframe: "hour"}
	if _, err := e.client.GuestMetrics(t.Context(), proxmoxsafe.GuestMetricsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", VMID: 100}, MetricsWindow: w}); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("guest without type: %v", err)
	}
	if _, err := e.client.StorageMetrics(t.Context(), proxmoxsafe.StorageMetricsInput{Node: "pve1", MetricsWindow: w}); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("storage without id: %v", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests after refusals", n)
	}
	g, err := e.client.GuestMetrics(t.Context(), proxmoxsafe.GuestMetricsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, MetricsWindow: w})
	if err != nil || g.Target != "qemu" || g.VMID != 100 {
		t.Errorf("guest: %+v, %v", g, err)
	}
	n, err := e.client.NodeMetrics(t.Context(), proxmoxsafe.NodeMetricsInput{Node: "pve1", MetricsWindow: w})
	if err != nil || n.Target != "node" {
		t.Errorf("node: %+v, %v", n, err)
	}
	s, err := e.client.StorageMetrics(t.Context(), proxmoxsafe.StorageMetricsInput{Node: "pve1", Storage: "local", MetricsWindow: w})
	if err != nil || s.Target != "storage" {
		t.Errorf("storage: %+v, %v", s, err)
	}
}
