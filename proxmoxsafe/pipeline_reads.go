package proxmoxsafe

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The reads a mutation's checks need (the guest's status/current, its
// running tasks, /cluster/resources for protection by name, tag or pool,
// and what the operation's precondition reads: the snapshot list, the
// config, …) do not depend on each other. They are sent at once, after
// validation, policy and the claim, so a mutation costs one round trip of
// reads and then its one request; a Proxmox behind a VPN or in another
// site is at 20–80 ms a round trip. The checks still judge the reads in
// the pipeline's order, so what a refusal says is what reading them one
// after another would say: a read that fails cancels only the reads
// judged after it (their verdicts can no longer matter), and those report
// its error.

// maxReadsAtOnce bounds the reads one mutation step sends at once. A step
// sends at most five today (status, tasks, resources and two of the
// operation's own); the default transport keeps at least as many idle connections
// (minIdleConnsPerHost), so the reads reuse them instead of paying a TLS
// handshake each.
const maxReadsAtOnce = 6

// errReadsDone is the cause with which a step's reads are cancelled once
// the step no longer needs them (it refused, or it is done).
var errReadsDone = errors.New("the mutation's checks no longer need this read")

// readGroup runs one step's reads concurrently, at most maxReadsAtOnce at
// a time. Reads are numbered in the order they are started, which is the
// order they are judged in; the first failure cancels the reads numbered
// after it, with its error as the cause. stop cancels and waits for all
// of them, so no read outlives the step.
type readGroup struct {
	ctx   context.Context
	slots chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	cancels []context.CancelCauseFunc
	failed  int // the earliest failed read's number; -1: none
	failure error
}

func newReadGroup(ctx context.Context) *readGroup {
	return &readGroup{ctx: ctx, slots: make(chan struct{}, maxReadsAtOnce), failed: -1}
}

// add numbers a new read and returns its context; a read added after an
// earlier one failed starts cancelled.
func (g *readGroup) add() (int, context.Context) {
	ctx, cancel := context.WithCancelCause(g.ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	i := len(g.cancels)
	g.cancels = append(g.cancels, cancel)
	if g.failed >= 0 {
		cancel(g.failure)
	}
	return i, ctx
}

// fail records that read i failed with err and cancels the reads after it.
func (g *readGroup) fail(i int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed >= 0 && g.failed < i {
		return // an earlier failure already cancelled this one and the rest
	}
	g.failed, g.failure = i, err
	for _, cancel := range g.cancels[i+1:] {
		cancel(err)
	}
}

// stop cancels the reads still running and waits until every one ended.
func (g *readGroup) stop() {
	g.mu.Lock()
	for _, cancel := range g.cancels {
		cancel(errReadsDone)
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// pending is a read running in a readGroup.
type pending[T any] struct {
	g    *readGroup
	ctx  context.Context
	done chan struct{}
	v    T
	err  error
}

// goRead starts read in g and returns what wait will answer.
func goRead[T any](g *readGroup, read func(ctx context.Context) (T, error)) *pending[T] {
	i, ctx := g.add()
	p := &pending[T]{g: g, ctx: ctx, done: make(chan struct{})}
	g.wg.Go(func() {
		defer close(p.done)
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			p.err = context.Cause(ctx)
			return
		}
		defer func() { <-g.slots }()
		if p.v, p.err = read(ctx); p.err != nil {
			g.fail(i, p.err)
		}
	})
	return p
}

// wait returns the read's result once it ended. A read cut short by an
// earlier read's failure returns that failure (the one its verdict waits
// behind) instead of its own "cancelled"; the caller's cancellation is
// returned as the read saw it.
func (p *pending[T]) wait() (T, error) {
	<-p.done
	if p.err != nil && p.ctx.Err() != nil && p.g.ctx.Err() == nil {
		if cause := context.Cause(p.ctx); cause != errReadsDone {
			return p.v, cause
		}
	}
	return p.v, p.err
}

// prefetch is a read an operation's precondition needs that does not
// depend on the guest's state (the snapshot list, the config): the
// operation lists it in mutationCall.prefetch, the pipeline starts it
// with its own reads, and the precondition takes the result with get.
// A precondition called without it started (or a second time) reads it
// then, so the precondition is correct either way; only the round trips
// differ.
type prefetch[T any] struct {
	read func(ctx context.Context) (T, error)
	p    *pending[T]
}

// prefetcher is a prefetch of any type, as mutationCall lists them.
type prefetcher interface {
	start(g *readGroup)
}

func newPrefetch[T any](read func(ctx context.Context) (T, error)) *prefetch[T] {
	return &prefetch[T]{read: read}
}

func (f *prefetch[T]) start(g *readGroup) { f.p = goRead(g, f.read) }

// get returns the started read's result once (then forgets it), or reads
// now when none was started.
func (f *prefetch[T]) get(ctx context.Context) (T, error) {
	if p := f.p; p != nil {
		f.p = nil
		return p.wait()
	}
	return f.read(ctx)
}

// stepReads are the reads one pipeline step (admit, or the recheck after
// a slow approval) sends at once.
type stepReads struct {
	g     *readGroup
	state *pending[GuestState]
	// protection is nil when the step does not check protection by name,
	// tag or pool (no such rule, a guest still to be created, a recheck).
	protection *pending[string]
	tasks      *pending[[]rawActiveTask]
	// backup is the guest's newest backup, for the recent-backup guard;
	// nil when the guard does not apply.
	backup *pending[newestBackup]
}

// startReads sends the step's reads: m's fresh state, the guest's active
// tasks, m's prefetches and, with protection, what protection by name,
// tag or pool needs. The caller must call stop.
func (c *Client) startReads(ctx context.Context, m *mutation, protection bool) *stepReads {
	g := newReadGroup(ctx)
	r := &stepReads{g: g}
	r.state = goRead(g, func(ctx context.Context) (GuestState, error) { return c.freshState(ctx, m) })
	if protection && c.policy.protect.byAttributes() {
		r.protection = goRead(g, func(ctx context.Context) (string, error) { return c.protection(ctx, m.target) })
	}
	for _, p := range m.prefetch {
		p.start(g)
	}
	r.tasks = goRead(g, func(ctx context.Context) ([]rawActiveTask, error) { return c.activeTasks(ctx, m.target) })
	if c.backupGuardAge(m) > 0 {
		r.backup = goRead(g, func(ctx context.Context) (newestBackup, error) { return c.newestBackupOf(ctx, m.target) })
	}
	return r
}

// recentBackup is the recent-backup guard's verdict on the step's read
// (nil when the guard does not apply).
func (r *stepReads) recentBackup(c *Client, m *mutation) error {
	if r.backup == nil {
		return nil
	}
	nb, err := r.backup.wait()
	if err != nil {
		return &PreconditionReadError{Err: err}
	}
	return checkRecentBackup(m, nb, c.backupGuardAge(m), time.Now())
}

func (r *stepReads) stop() { r.g.stop() }

// protectedBy is the protection read's verdict ("" when no such rule).
func (r *stepReads) protectedBy() (string, error) {
	if r.protection == nil {
		return "", nil
	}
	return r.protection.wait()
}
