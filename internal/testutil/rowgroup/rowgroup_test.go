package rowgroup

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// parkedInRow blocks until release is closed; its name marks the
// goroutine in a profile.
func parkedInRow(release chan struct{}) { <-release }

// TestLabelFollowsDescendants: a goroutine started by a goroutine the row
// started carries the row's label, and waitGone sees it end.
func TestLabelFollowsDescendants(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	id := "test-descendant"
	go pprof.Do(context.Background(), pprof.Labels(labelKey, id), func(context.Context) {
		go func() { // the row's child starts a grandchild and ends
			go parkedInRow(release)
			close(started)
		}()
	})
	<-started
	// A goroutine not yet scheduled has no stack in the profile: wait
	// until the grandchild is parked.
	left := labelled(id)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(left, "parkedInRow") && time.Now().Before(deadline); left = labelled(id) {
		time.Sleep(time.Millisecond)
	}
	if !strings.Contains(left, "parkedInRow") {
		t.Fatalf("the grandchild is not attributed to its row; labelled(%q) =\n%s", id, left)
	}
	if other := labelled(id + "0"); other != "" {
		t.Errorf("a label that only starts with the row's matched:\n%s", other)
	}
	close(release)
	if left := waitGone(id); left != "" {
		t.Errorf("waitGone: still running after release:\n%s", left)
	}
}

// TestGroupBoundsBusyRows: rows that never say they wait run side by side,
// up to the bound and never above it, whatever go test's -parallel is.
func TestGroupBoundsBusyRows(t *testing.T) {
	const busy, rows = 3, 7
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	full := sync.NewCond(&mu)
	running, most := 0, 0
	var ran atomic.Int32
	g := New(t, busy)
	for range rows {
		g.Run("row", func(t *testing.T, _ *Row) {
			mu.Lock()
			running++
			most = max(most, running)
			if most == busy {
				full.Broadcast()
			}
			for most < busy && ctx.Err() == nil { // until the bound was reached once
				full.Wait()
			}
			running--
			mu.Unlock()
			ran.Add(1)
		})
	}
	stop := context.AfterFunc(ctx, func() { mu.Lock(); full.Broadcast(); mu.Unlock() })
	g.Wait()
	stop()
	if ctx.Err() != nil {
		t.Fatalf("the rows never ran %d at once (at most %d)", busy, most)
	}
	if most > busy {
		t.Errorf("%d rows ran at once, bound %d", most, busy)
	}
	if ran.Load() != rows {
		t.Errorf("%d rows ran, want %d", ran.Load(), rows)
	}
}

// TestWaitingRowsMakeRoom: with one busy row at a time, a row that says it
// waits lets the next one start, so every row can wait at once; no two
// rows ever work at once.
func TestWaitingRowsMakeRoom(t *testing.T) {
	const rows = 5
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	all := sync.NewCond(&mu)
	working, mostWorking, waiting := 0, 0, 0
	g := New(t, 1)
	for range rows {
		g.Run("row", func(t *testing.T, r *Row) {
			mu.Lock()
			working++
			mostWorking = max(mostWorking, working)
			mu.Unlock()
			runtime.Gosched() // room for a second working row, were one let in
			mu.Lock()
			working--
			waiting++
			mu.Unlock()
			r.Waiting()
			r.Waiting() // a second call does nothing
			mu.Lock()
			all.Broadcast()
			for waiting < rows && ctx.Err() == nil { // until every row waits
				all.Wait()
			}
			mu.Unlock()
		})
	}
	stop := context.AfterFunc(ctx, func() { mu.Lock(); all.Broadcast(); mu.Unlock() })
	g.Wait()
	stop()
	if ctx.Err() != nil {
		t.Fatalf("the rows never all waited at once (%d of %d)", waiting, rows)
	}
	if mostWorking != 1 {
		t.Errorf("%d rows worked at once, bound 1", mostWorking)
	}
}

// TestWaitingWhen: the second row starts once the first row's condition
// holds, while the first is still running; a condition that never holds
// is stopped with its row.
func TestWaitingWhen(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var reached atomic.Bool
	secondStarted := make(chan struct{})
	g := New(t, 1)
	g.Run("first", func(t *testing.T, r *Row) {
		defer r.WaitingWhen(reached.Load)()
		reached.Store(true)
		select {
		case <-secondStarted:
		case <-ctx.Done():
			t.Error("the second row did not start while the first waited")
		}
	})
	g.Run("second", func(t *testing.T, r *Row) {
		close(secondStarted)
		defer r.WaitingWhen(func() bool { return false })()
	})
	g.Wait()
}

// TestWorkingWaitsForASlot: a row that works again after its wait takes a
// slot again, so it does not work beside the row that took its slot.
func TestWorkingWaitsForASlot(t *testing.T) {
	var aWorking atomic.Bool
	aTrying, bStarted := make(chan struct{}), make(chan struct{})
	g := New(t, 1)
	g.Run("a", func(t *testing.T, r *Row) {
		r.Waiting()
		<-bStarted
		close(aTrying)
		r.Working()
		aWorking.Store(true)
	})
	g.Run("b", func(t *testing.T, r *Row) {
		close(bStarted)
		<-aTrying
		for range 100 {
			runtime.Gosched() // room for a's Working to return, were it not blocked
		}
		if aWorking.Load() {
			t.Error("row a works again while row b holds the only slot")
		}
	})
	g.Wait()
	if !aWorking.Load() {
		t.Error("row a never worked again")
	}
}

// helperEnv makes TestLeakingRowsHelper run: it fails on purpose, in a
// child process started by TestLeaksAreReported.
const helperEnv = "ROWGROUP_LEAKING_ROWS_HELPER"

// leakedByHelper is the goroutine an outside goroutine starts on the row
// "leaks on its behalf"'s request; its name marks it in goleak's report.
func leakedByHelper(release chan struct{}) { <-release }

func TestLeakingRowsHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("runs only in the child process of TestLeaksAreReported")
	}
	// An outside goroutine that starts goroutines for whoever asks: what
	// it starts carries its labels (none), not the asking row's.
	asks := make(chan func())
	go func() {
		for f := range asks {
			go f()
		}
	}()
	forever := make(chan struct{})
	g := New(t, 3)
	g.Run("leaks", func(t *testing.T, _ *Row) { go parkedInRow(forever) })
	g.Run("clean", func(t *testing.T, _ *Row) {
		done := make(chan struct{})
		go func() { close(done) }()
		<-done
	})
	g.Run("leaks on its behalf", func(t *testing.T, _ *Row) { asks <- func() { leakedByHelper(forever) } })
	g.Wait()
}

// TestLeaksAreReported: a goroutine a row leaves behind fails that row,
// with its stack; one started on a row's behalf by a goroutine outside the
// rows fails the group's test in Wait; a clean row passes.
func TestLeaksAreReported(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLeakingRowsHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the helper passed, leaks and all:\n%s", out)
	}
	s := string(out)
	for _, w := range []string{
		"--- FAIL: TestLeakingRowsHelper/leaks ",
		"goroutines started by this row are still running after it and its cleanups ended",
		"rowgroup.parkedInRow",
		"--- PASS: TestLeakingRowsHelper/clean ",
		"--- PASS: TestLeakingRowsHelper/leaks_on_its_behalf ",
		"found unexpected goroutines",
		"rowgroup.leakedByHelper",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("the helper's output lacks %q:\n%s", w, s)
		}
	}
}
