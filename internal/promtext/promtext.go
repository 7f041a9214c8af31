package promtext

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultBuckets are a histogram's upper bounds in seconds, from a cached
// read to a slow task wait.
var DefaultBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Set holds named series. The zero value is not usable: use NewSet.
type Set struct {
	mu         sync.Mutex
	help       map[string]string // family name -> help text
	kinds      map[string]string // family name -> counter, histogram, gauge
	counters   map[string]*atomic.Uint64
	histograms map[string]*Histogram
	gauges     map[string]func() float64
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{help: map[string]string{}, kinds: map[string]string{}, counters: map[string]*atomic.Uint64{},
		histograms: map[string]*Histogram{}, gauges: map[string]func() float64{}}
}

// Labels writes a label set {k="v",…} from pairs, the values escaped as
// the format asks.
func Labels(kv ...string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func (s *Set) family(name, kind, help string) {
	if k, ok := s.kinds[name]; ok && k != kind {
		panic(fmt.Sprintf("promtext: %s is a %s, not a %s", name, k, kind))
	}
	s.kinds[name], s.help[name] = kind, help
}

// Counter returns the counter of family name with labels (from Labels),
// creating it at 0.
func (s *Set) Counter(name, help, labels string) *atomic.Uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.family(name, "counter", help)
	c := s.counters[name+labels]
	if c == nil {
		c = new(atomic.Uint64)
		s.counters[name+labels] = c
	}
	return c
}

// Gauge sets the gauge of family name with labels to what f returns at
// each Write.
func (s *Set) Gauge(name, help, labels string, f func() float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.family(name, "gauge", help)
	s.gauges[name+labels] = f
}

// Histogram returns the histogram of family name with labels, with
// DefaultBuckets.
func (s *Set) Histogram(name, help, labels string) *Histogram {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.family(name, "histogram", help)
	h := s.histograms[name+labels]
	if h == nil {
		h = &Histogram{counts: make([]uint64, len(DefaultBuckets))}
		s.histograms[name+labels] = h
	}
	return h
}

// Histogram counts observations into cumulative buckets.
type Histogram struct {
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

// Observe adds one observation v (seconds).
func (h *Histogram) Observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i, _ := slices.BinarySearch(DefaultBuckets, v); i < len(h.counts) {
		h.counts[i]++
	}
	h.count++
	h.sum += v
}

// Write writes every series, families in name order, each with its HELP
// and TYPE lines.
func (s *Set) Write(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	names := make([]string, 0, len(s.kinds))
	for n := range s.kinds {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, s.help[name], name, s.kinds[name])
		switch s.kinds[name] {
		case "counter":
			for _, key := range seriesOf(s.counters, name) {
				fmt.Fprintf(&b, "%s %d\n", key, s.counters[key].Load())
			}
		case "gauge":
			for _, key := range seriesOf(s.gauges, name) {
				fmt.Fprintf(&b, "%s %s\n", key, formatFloat(s.gauges[key]()))
			}
		case "histogram":
			for _, key := range seriesOf(s.histograms, name) {
				writeHistogram(&b, name, key[len(name):], s.histograms[key])
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// seriesOf returns the keys of m that belong to family name, sorted.
func seriesOf[V any](m map[string]V, name string) []string {
	var keys []string
	for k := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func writeHistogram(b *strings.Builder, name, labels string, h *Histogram) {
	h.mu.Lock()
	defer h.mu.Unlock()
	withLe := func(le string) string {
		if labels == "" {
			return `{le="` + le + `"}`
		}
		return labels[:len(labels)-1] + `,le="` + le + `"}`
	}
	var cum uint64
	for i, ub := range DefaultBuckets {
		cum += h.counts[i]
		fmt.Fprintf(b, "%s_bucket%s %d\n", name, withLe(formatFloat(ub)), cum)
	}
	fmt.Fprintf(b, "%s_bucket%s %d\n%s_sum%s %s\n%s_count%s %d\n", name, withLe("+Inf"), h.count, name, labels, formatFloat(h.sum), name, labels, h.count)
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
