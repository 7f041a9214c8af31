package promtext

import (
	"strings"
	"testing"
)

// TestWrite: the exposition a Prometheus server parses: HELP and TYPE per
// family, cumulative buckets ending in +Inf, sum and count, escaped label
// values, families and series in a stable order.
func TestWrite(t *testing.T) {
	t.Parallel()
	s := NewSet()
	s.Counter("calls_total", "Tool calls.", Labels("tool", "b", "outcome", "ok")).Add(2)
	s.Counter("calls_total", "Tool calls.", Labels("tool", "a", "outcome", "ok")).Add(1)
	s.Counter("calls_total", "Tool calls.", Labels("tool", `q"\`+"\n", "outcome", "ok")).Add(1)
	h := s.Histogram("dur_seconds", "Durations.", Labels("tool", "a"))
	h.Observe(0.003)
	h.Observe(0.3)
	h.Observe(100)
	s.Gauge("sessions", "Sessions.", "", func() float64 { return 2 })
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP calls_total Tool calls.
# TYPE calls_total counter
calls_total{tool="a",outcome="ok"} 1
calls_total{tool="b",outcome="ok"} 2
calls_total{tool="q\"\\\n",outcome="ok"} 1
# HELP dur_seconds Durations.
# TYPE dur_seconds histogram
dur_seconds_bucket{tool="a",le="0.005"} 1
dur_seconds_bucket{tool="a",le="0.01"} 1
dur_seconds_bucket{tool="a",le="0.025"} 1
dur_seconds_bucket{tool="a",le="0.05"} 1
dur_seconds_bucket{tool="a",le="0.1"} 1
dur_seconds_bucket{tool="a",le="0.25"} 1
dur_seconds_bucket{tool="a",le="0.5"} 2
dur_seconds_bucket{tool="a",le="1"} 2
dur_seconds_bucket{tool="a",le="2.5"} 2
dur_seconds_bucket{tool="a",le="5"} 2
dur_seconds_bucket{tool="a",le="10"} 2
dur_seconds_bucket{tool="a",le="30"} 2
dur_seconds_bucket{tool="a",le="60"} 2
dur_seconds_bucket{tool="a",le="+Inf"} 3
dur_seconds_sum{tool="a"} 100.303
dur_seconds_count{tool="a"} 3
# HELP sessions Sessions.
# TYPE sessions gauge
sessions 2
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestBucketEdges: an observation equal to a bound falls in that bound's
// bucket (le means less than or equal).
func TestBucketEdges(t *testing.T) {
	t.Parallel()
	s := NewSet()
	h := s.Histogram("d", "D.", "")
	h.Observe(0.005)
	var b strings.Builder
	s.Write(&b)
	if !strings.Contains(b.String(), `d_bucket{le="0.005"} 1`) {
		t.Errorf("%s", b.String())
	}
}

// TestKindConflictPanics: one name is one kind; using it as another is
// a programmer error.
func TestKindConflictPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	s := NewSet()
	s.Counter("x", "X.", "")
	s.Gauge("x", "X.", "", func() float64 { return 0 })
}
