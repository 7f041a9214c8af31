package proxmoxsafe

import (
	"testing"
	"time"
)

// TestDefaultPollSchedule: a wait polls at once, then after a short pause
// that grows by half up to 2 s. A task that ends within a second is seen
// at most one short pause later, and a long one costs one read per 2 s;
// the schedule, not a clock, is checked here (bench/compare's "wait"
// section measures the answer's delay after a task's end).
func TestDefaultPollSchedule(t *testing.T) {
	c := &Client{validate: inputValidator()}
	o, err := c.waitOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newBackoff(o.Interval, o.MaxInterval)
	var total time.Duration
	var pauses []time.Duration
	for range 20 {
		p := b.pause()
		pauses = append(pauses, p)
		total += p
	}
	if pauses[0] != 50*time.Millisecond || pauses[1] != 75*time.Millisecond {
		t.Errorf("first pauses %v, want 50ms then 75ms", pauses[:2])
	}
	for i, p := range pauses {
		if p > 2*time.Second || i > 0 && p < pauses[i-1] {
			t.Errorf("pause %d is %v after %v: want growing, at most 2s", i, p, pauses[max(i-1, 0)])
		}
	}
	// Polls within the first second: enough that a short task is seen
	// soon, few enough to be no load on Proxmox.
	n, sum := 0, time.Duration(0)
	for _, p := range pauses {
		if sum += p; sum > time.Second {
			break
		}
		n++
	}
	if n < 5 || n > 8 {
		t.Errorf("%d polls after the first within a second (%v), want 5 to 8", n, pauses)
	}
	if pauses[len(pauses)-1] != 2*time.Second {
		t.Errorf("the pause stops growing at %v, want 2s", pauses[len(pauses)-1])
	}
}
