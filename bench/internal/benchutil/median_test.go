package benchutil

import (
	"slices"
	"testing"
	"time"
)

// TestMedian: the middle sample, the upper middle for an even count,
// zero for none, and the caller's slice left in its order (the bench
// commands keep per-run samples paired by index).
func TestMedian(t *testing.T) {
	in := []time.Duration{5, 1, 4, 2, 3}
	if got := Median(in); got != 3 {
		t.Errorf("Median(%v) = %v, want 3", in, got)
	}
	if !slices.Equal(in, []time.Duration{5, 1, 4, 2, 3}) {
		t.Errorf("Median reordered its input: %v", in)
	}
	if got := Median([]int64{4, 1, 3, 2}); got != 3 {
		t.Errorf("Median of 1..4 = %v, want 3 (the upper middle)", got)
	}
	if got := Median([]float64(nil)); got != 0 {
		t.Errorf("Median(nil) = %v, want 0", got)
	}
}
