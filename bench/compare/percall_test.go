package main

import (
	"errors"
	"slices"
	"testing"
	"time"
)

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

// TestInterleavedTakesTurns: after the warm-up calls, each round gives
// every measure of a group its n calls in a row, in the order
// benchutil.RoundOrder rotates, and keeps one figure per measure and
// round; a failing call ends the section with the measure's name.
func TestInterleavedTakesTurns(t *testing.T) {
	var calls []string
	m := func(name string) measure {
		return measure{name: name, call: func() error { calls = append(calls, name); return nil }}
	}
	const rounds, n = 3, 2
	got, err := interleaved([][]measure{{m("a"), m("b")}, {m("c")}}, rounds, n)
	if err != nil {
		t.Fatal(err)
	}
	warm := max(n/10, 3)
	want := slices.Repeat([]string{"a"}, warm)
	want = append(append(want, slices.Repeat([]string{"b"}, warm)...), slices.Repeat([]string{"c"}, warm)...)
	for _, order := range [][]string{{"a", "b", "c"}, {"b", "a", "c"}, {"a", "b", "c"}} {
		for _, name := range order {
			want = append(want, slices.Repeat([]string{name}, n)...)
		}
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls in order\n%v\nwant\n%v", calls, want)
	}
	for _, name := range []string{"a", "b", "c"} {
		if s := got[name]; s == nil || len(s.wall) != rounds || len(s.cpu) != rounds {
			t.Errorf("%s: %+v, want %d wall and cpu figures", name, s, rounds)
		}
	}

	boom := errors.New("boom")
	_, err = interleaved([][]measure{{{name: "ours", call: func() error { return boom }}}}, 1, 1)
	if !errors.Is(err, boom) || err.Error() != "ours: boom" {
		t.Errorf("a failing call: %v, want ours: boom", err)
	}
}
