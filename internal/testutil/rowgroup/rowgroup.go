// Package rowgroup runs the rows of a table test side by side, and still
// checks each row for leaked goroutines.
//
// A table test that checks for leaks after each row with goleak (a snapshot
// before the row, VerifyNone after it) has to run its rows one after
// another: a snapshot cannot tell one row's goroutines from another's. Rows
// that spend their time waiting for a timer (a request bound, a wait's
// deadline) then add up to seconds of idle waiting. A [Group] runs them side
// by side, yet lets only a bounded number of them work at once: a row that
// has reached its wait says so ([Row.Waiting]) and the next row starts. So
// the rows' work, and the time bounds of their healthy requests, see about
// the same machine as when the rows ran one after another, and their waits
// overlap. It keeps two leak checks:
//
//   - Each row's goroutine carries a pprof label naming the row, and the
//     runtime copies a goroutine's labels to every goroutine it starts, so
//     every goroutine the row started, directly or not, carries it. Once the
//     row and its cleanups are done, a goroutine still carrying the label is
//     that row's leak, and the row fails with its stack.
//   - After the whole group, goleak.VerifyNone against a snapshot taken
//     before it catches any goroutine left behind that the labels cannot
//     attribute: one started on a row's behalf by a goroutine outside the
//     row, or by a timer.
//
// The group's test must not run in parallel with other tests (no
// t.Parallel in it or its parents), or the final check would see their
// goroutines, as a per-row goleak check would.
package rowgroup

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// labelKey is the pprof label that names a row.
const labelKey = "rowgroup.row"

// nextRow numbers rows across groups, so a label is never reused.
var nextRow atomic.Uint64

// Group runs rows as subtests of one test. Create it with [New], start rows
// with [Group.Run] and end with [Group.Wait].
type Group struct {
	t      *testing.T
	before goleak.Option
	slots  chan struct{}
	wg     sync.WaitGroup
	waited atomic.Bool
}

// Row is one running row: it tells the group when the row only waits.
type Row struct {
	slots   chan struct{}
	mu      sync.Mutex
	working bool // the row holds a slot
}

// Waiting tells the group that the row now only waits (for a bound, a
// timer, a fault that never answers), so another row may work. It may be
// called from any goroutine; it does nothing when the row already waits.
// A row that never calls it keeps its slot until it ends.
func (r *Row) Waiting() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.working {
		<-r.slots
		r.working = false
	}
}

// Working tells the group that the row works again after a wait: it
// returns once fewer than busy rows work, so what the row does after its
// wait (checking results, closing its fakes) does not run beside another
// row's time-bounded requests. It does nothing when the row already works.
func (r *Row) Working() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.working {
		r.slots <- struct{}{}
		r.working = true
	}
}

// WaitingWhen calls [Row.Waiting] as soon as reached reports true, asking
// it every few milliseconds from a goroutine of its own: for a row whose
// wait begins inside a call it cannot see into (a request that meets a
// fault). The returned stop ends the asking and returns once the goroutine
// has; call it (once or more) before the row ends.
func (r *Row) WaitingWhen(reached func() bool) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !reached() {
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
		r.Waiting()
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }); <-exited }
}

// New returns a group of rows of t in which at most busy rows at once are
// working: started and not yet [Row.Waiting] (busy < 1 counts as 1). Rows
// that wait do not count, so any number of them may wait at once. The
// bound does not follow go test's -parallel flag (GOMAXPROCS by default, 2
// on a 2-core machine).
func New(t *testing.T, busy int) *Group {
	t.Helper()
	g := &Group{t: t, before: goleak.IgnoreCurrent(), slots: make(chan struct{}, max(busy, 1))}
	t.Cleanup(func() {
		if !g.waited.Load() {
			t.Error("rowgroup: the test ended without calling Wait: rows were not waited for or checked")
		}
	})
	return g
}

// Run runs f as the subtest name of the group's test, in its own goroutine,
// as soon as fewer than busy rows are working; it returns once the row has
// started. f must not call t.Parallel. When f and every cleanup it
// registered are done, any goroutine the row started that is still running
// (after goleak's grace period for goroutines on their way out) fails the
// row.
func (g *Group) Run(name string, f func(t *testing.T, r *Row)) {
	r := &Row{slots: g.slots}
	r.Working()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer r.Waiting() // the slot is free once the row ends
		g.t.Run(name, func(t *testing.T) { runRow(t, func(t *testing.T) { f(t, r) }) })
	}()
}

// Wait waits for every row to end, then checks that no goroutine started
// since [New] is still running.
func (g *Group) Wait() {
	g.t.Helper()
	g.wg.Wait()
	g.waited.Store(true)
	goleak.VerifyNone(g.t, g.before)
}

// runRow runs f with the row's label on its goroutine and checks, after
// f's cleanups, that no goroutine carrying the label is left.
func runRow(t *testing.T, f func(t *testing.T)) {
	id := strconv.FormatUint(nextRow.Add(1), 10)
	// Registered first, so it runs after every cleanup f registers.
	t.Cleanup(func() {
		pprof.SetGoroutineLabels(context.Background()) // this goroutine is done with the row
		if left := waitGone(id); left != "" {
			t.Errorf("goroutines started by this row are still running after it and its cleanups ended:\n%s", left)
		}
	})
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(labelKey, id)))
	f(t)
}

// waitGone waits for the goroutines labelled id to end, as long as goleak
// waits for goroutines on their way out (its default: 20 tries, sleeping
// from 1µs doubling up to 100ms, about 0.4 s in all), and returns the
// stacks of those still running ("" when none is).
func waitGone(id string) string {
	sleep := time.Microsecond
	for try := 1; ; try++ {
		left := labelled(id)
		if left == "" || try == 20 {
			return left
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, 100*time.Millisecond)
	}
}

// labelled returns the goroutine profile's entries (count, stack and
// labels) of the goroutines labelled id, or "".
func labelled(id string) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return "rowgroup: cannot read the goroutine profile: " + err.Error()
	}
	// The debug=1 format: a header, then one blank-line separated entry per
	// stack and label set, its labels on a line "# labels: {"k":"v", ...}"
	// (keys and values quoted with %q, sorted).
	want := fmt.Sprintf("%q:%q", labelKey, id)
	var out []string
	for entry := range strings.SplitSeq(buf.String(), "\n\n") {
		for line := range strings.SplitSeq(entry, "\n") {
			if labels, ok := strings.CutPrefix(line, "# labels: "); ok && hasLabel(labels, want) {
				out = append(out, entry)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}

// hasLabel reports whether the label set {"a":"1", "b":"2"} holds the pair
// want ("k":"v"), not merely a pair that starts with it.
func hasLabel(set, want string) bool {
	set = strings.TrimSuffix(strings.TrimPrefix(set, "{"), "}")
	for pair := range strings.SplitSeq(set, ", ") {
		if pair == want {
			return true
		}
	}
	return false
}
