package main

import (
	"testing"
	"time"
)

func TestTargetText(t *testing.T) {
	for target, want := range map[float64]string{1.15: "≤ 1.15×", 1.5: "≤ 1.5×", 1: "≤ 1.0×", 0: "—"} {
		if got := targetText(target); got != want {
			t.Errorf("targetText(%v) = %q, want %q", target, got, want)
		}
	}
}

// TestPairedRatio: ratios are taken round by round (a[i]/b[i]), not as
// the ratio of the medians, and no ratio is made from a missing figure.
func TestPairedRatio(t *testing.T) {
	a := []time.Duration{100, 300, 200}
	b := []time.Duration{100, 100, 400}
	if med, lo, hi := pairedRatio(a, b); med != 1 || lo != 0.5 || hi != 3 {
		t.Errorf("pairedRatio = %v, %v, %v; want 1, 0.5, 3", med, lo, hi)
	}
	if med, _, _ := pairedRatio(a, []time.Duration{100, 0, 100}); med != 0 {
		t.Errorf("a round without a figure gave ratio %v, want 0", med)
	}
	if med, _, _ := pairedRatio(a, b[:2]); med != 0 {
		t.Errorf("unpaired samples gave ratio %v, want 0", med)
	}
}
