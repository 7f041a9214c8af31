package main

import (
	"testing"
)

func TestTargetText(t *testing.T) {
	for target, want := range map[float64]string{1.15: "≤ 1.15×", 1.5: "≤ 1.5×", 1: "≤ 1.0×", 0: "—"} {
		if got := targetText(target); got != want {
			t.Errorf("targetText(%v) = %q, want %q", target, got, want)
		}
	}
}
