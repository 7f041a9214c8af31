package benchutil

import (
	"slices"
	"testing"
)

// Each binary must take each position equally often over whole cycles of
// rounds: a fixed order (the same binary first every round) fails.
func TestRoundOrderBalancesPositions(t *testing.T) {
	for n := 1; n <= 4; n++ {
		const cycles = 3
		count := make([][]int, n) // count[binary][position]
		for b := range count {
			count[b] = make([]int, n)
		}
		for r := range cycles * n {
			order := RoundOrder(r, n)
			if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, seq(n)) {
				t.Fatalf("RoundOrder(%d, %d) = %v: not every binary once", r, n, order)
			}
			for pos, b := range order {
				count[b][pos]++
			}
		}
		for b := range count {
			for pos, c := range count[b] {
				if c != cycles {
					t.Errorf("n=%d: binary %d ran %d times in position %d over %d rounds, want %d", n, b, c, pos, cycles*n, cycles)
				}
			}
		}
	}
}

// Consecutive rounds must not repeat an order (else a position's cost
// drifts onto one binary for a stretch of rounds).
func TestRoundOrderChangesEveryRound(t *testing.T) {
	for n := 2; n <= 4; n++ {
		for r := range 2 * n {
			if a, b := RoundOrder(r, n), RoundOrder(r+1, n); slices.Equal(a, b) {
				t.Errorf("n=%d: rounds %d and %d both %v", n, r, r+1, a)
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
