package proxmoxsafe

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"
)

// Completion proof for mutations (DESIGN §2.6: receipts are not proof).
//
// A [Receipt] says Proxmox accepted a request. [Client.Verify] turns it into
// an [Outcome]: it polls the task until it stops, then re-reads the guest
// (or its snapshot list) until the state the action promised is there. The
// wait is bounded by a timeout the caller picks and the operator caps.

// DefaultWaitTimeout bounds a wait when [VerifyOptions.Timeout] is zero.
const DefaultWaitTimeout = 30 * time.Second

// DefaultMaxWait is the operator's cap on any wait when [Config.MaxWait] is
// zero. Two minutes covers a clean shutdown of most guests and the HA
// manager's usual delay, while keeping a tool call from holding a client
// (and a model's turn) for long.
const DefaultMaxWait = 120 * time.Second

// MaxMaxWait is the largest [Config.MaxWait] accepted. Waiting longer than
// an hour inside one call is almost certainly a unit mistake ("120m" for
// "120s"); poll the task later instead.
const MaxMaxWait = time.Hour

// DefaultLogTail is how many task log lines an [Outcome] keeps.
const DefaultLogTail = 10

// rebootClockSlack is how much younger than the task a rebooted guest's
// uptime may look and still count as "restarted after the request". It
// absorbs the 1-second resolution of both numbers and modest clock skew
// between this host (elapsed time) and the Proxmox node (the UPID's start
// time).
const rebootClockSlack = 15 * time.Second

// OutcomeStatus says, in one word, what became of a submitted mutation.
type OutcomeStatus string

// The outcomes [Client.Verify] reports.
const (
	// OutcomeSubmitted: only submission is known. A receipt without a wait
	// has no Outcome at all; an Outcome says "submitted" when the wait was
	// cut short by the caller's context or could not read Proxmox.
	OutcomeSubmitted OutcomeStatus = "submitted"
	// OutcomeCompleted: the task ended OK and fresh state shows the result.
	OutcomeCompleted OutcomeStatus = "completed"
	// OutcomeCompletedWithWarnings: the task ended "WARNINGS: n" and fresh
	// state shows the result.
	OutcomeCompletedWithWarnings OutcomeStatus = "completed_with_warnings"
	// OutcomeFailed: the task stopped with an error exit status.
	OutcomeFailed OutcomeStatus = "failed"
	// OutcomeTimeout: at the timeout the task was still running, or it had
	// ended but the guest had not reached the expected state yet. The
	// action may still complete; check the task (UPID) and the guest later.
	OutcomeTimeout OutcomeStatus = "timeout"
)

// Outcome is what a wait established about a submitted mutation. Text in it
// comes from Proxmox, sanitized and capped: data, not instructions.
type Outcome struct {
	// Status is the verdict; see the Outcome* constants.
	Status OutcomeStatus `json:"status"`
	// Message says the verdict in one plain sentence.
	Message string `json:"message"`
	// UPID is the task waited for, to check later after a timeout.
	UPID string `json:"upid"`
	// TaskStatus is the task's last known status: "running" or "stopped".
	TaskStatus string `json:"task_status,omitempty"`
	// ExitStatus is the task's exit status once stopped: "OK",
	// "WARNINGS: <n>" or Proxmox's error text.
	ExitStatus string `json:"exitstatus,omitempty"`
	// Warnings is n of "WARNINGS: <n>".
	Warnings int `json:"warnings,omitempty"`
	// LogTail holds the last lines of the task log for failed tasks and
	// tasks with warnings (at most [DefaultLogTail], each capped).
	LogTail []string `json:"log_tail,omitempty"`
	// Verified is true when fresh state showed what the action promised:
	// the power state for power actions, the snapshot for snapshots.
	Verified bool `json:"verified"`
	// Observed says what the last fresh read showed, e.g. "running",
	// "stopped", "snapshot before-upgrade present".
	Observed string `json:"observed,omitempty"`
	// After is the guest state read last, for power actions.
	After *GuestState `json:"after,omitempty"`
	// Uptime is the guest's uptime in seconds at the last read, for power
	// actions; after a reboot it shows whether the guest restarted.
	Uptime int64 `json:"uptime,omitempty"`
	// TaskPolls and StatePolls count the task status and guest state reads.
	TaskPolls  int `json:"task_polls"`
	StatePolls int `json:"state_polls"`
	// WaitedMS is how long the wait took, in milliseconds.
	WaitedMS int64 `json:"waited_ms"`
	// TimeoutSeconds is the timeout that applied, after the operator's cap.
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// TimeoutClamped is true when the requested timeout exceeded the
	// operator's cap ([Config.MaxWait]) and the cap applied instead.
	TimeoutClamped bool `json:"timeout_clamped,omitempty"`
}

// Err returns a *[TaskError] (matching [ErrTaskFailed]) when the task
// failed, and nil for every other outcome: a timeout is not a failure, the
// action may still complete.
func (o *Outcome) Err() error {
	if o == nil || o.Status != OutcomeFailed {
		return nil
	}
	return &TaskError{UPID: o.UPID, ExitStatus: o.ExitStatus}
}

// ProgressPhase names what a wait is doing when it reports [Progress].
type ProgressPhase string

// Progress phases, in the order a wait goes through them.
const (
	// ProgressTaskRunning: the task status was read and it is still running.
	ProgressTaskRunning ProgressPhase = "task_running"
	// ProgressWaitingForState: the task ended but the guest does not show
	// the result yet.
	ProgressWaitingForState ProgressPhase = "waiting_for_state"
	// ProgressWaitingForHA: as ProgressWaitingForState, for an HA-managed
	// guest whose ha* task only asked the HA manager.
	ProgressWaitingForHA ProgressPhase = "waiting_for_ha"
	// ProgressDone: the wait has its outcome (reported once, last).
	ProgressDone ProgressPhase = "done"
)

// Progress is reported to [VerifyOptions.OnProgress] after every read.
type Progress struct {
	Phase ProgressPhase
	// Message is one short sentence for humans, e.g. "task running (poll 3)".
	Message string
	// Poll counts the reads so far (task and state), from 1; it only grows,
	// so adapters can use it as a progress counter.
	Poll int
	// Elapsed is the time since the wait began; Timeout is its bound.
	Elapsed time.Duration
	Timeout time.Duration
}

// VerifyOptions tunes [Client.Verify] and the Wait field of
// [GuestPowerInput] and [SnapshotGuestInput]. The zero value waits up to
// [DefaultWaitTimeout] with the same polling back-off as [Client.WaitTask].
type VerifyOptions struct {
	// Timeout bounds the whole wait; zero means [DefaultWaitTimeout]. A
	// value above the operator's cap ([Config.MaxWait]) is clamped to the
	// cap, not refused: the caller asked to wait "up to" that long.
	Timeout time.Duration `validate:"min=0"`
	// Interval is the first pause between polls; zero means 250 ms. The
	// pause grows by half each poll up to MaxInterval (zero means 5 s).
	Interval    time.Duration `validate:"min=0"`
	MaxInterval time.Duration `validate:"min=0"`
	// OnProgress, when set, is called after every poll, on the waiting
	// goroutine: it must return quickly and must not call back into the
	// wait. Adapters forward it (e.g. as MCP progress notifications).
	OnProgress func(Progress) `json:"-"`
}

// MaxWait returns the operator's cap on any wait: [Config.MaxWait], or
// [DefaultMaxWait] when that is zero.
func (c *Client) MaxWait() time.Duration { return c.maxWait }

// checkMaxWait resolves [Config.MaxWait] for New.
func checkMaxWait(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultMaxWait, nil
	case d < time.Second || d > MaxMaxWait:
		return 0, configError("MaxWait must be between 1s and %s (got %s)", MaxMaxWait, d)
	}
	return d, nil
}

// effectiveTimeout applies the default and the operator's cap.
func (c *Client) effectiveTimeout(requested time.Duration) (d time.Duration, clamped bool) {
	d = requested
	if d <= 0 {
		d = DefaultWaitTimeout
	}
	max := c.maxWait
	if max <= 0 {
		max = DefaultMaxWait // a Client not built by New
	}
	if d > max {
		// A default above a small operator cap is not the caller's doing.
		return max, requested > 0
	}
	return d, false
}

// expectation is what the fresh state must show for an action to count as
// done.
type expectation struct {
	status   string // "running" or "stopped" for power actions
	reboot   bool   // also require an uptime younger than the task
	snapshot string // snapshot name that must be listed
}

func expectFor(action string, t Target) (expectation, error) {
	switch action {
	case string(ActionStart):
		return expectation{status: "running"}, nil
	case string(ActionReboot):
		return expectation{status: "running", reboot: true}, nil
	case string(ActionShutdown), string(ActionStop):
		return expectation{status: "stopped"}, nil
	case "snapshot":
		if t.Snapshot == "" {
			break
		}
		return expectation{snapshot: t.Snapshot}, nil
	}
	return expectation{}, &ValidationError{Fields: []FieldError{{Field: "action", Problem: "is not an action Verify knows (start, shutdown, reboot, stop, snapshot with a snapshot name)"}}}
}

// rawVerifyStatus is status/current as the verification reads it: the
// precondition fields plus uptime, which proves a reboot happened.
type rawVerifyStatus struct {
	rawGuestStatus
	Uptime pve.Int `json:"uptime"`
}

// Verify waits for the task of a receipt and checks its effect from fresh
// state, returning what it established. It never sends a mutating request.
//
// It polls the task (GET tasks/{upid}/status, with [Client.WaitTask]'s
// back-off) until the task stops, then:
//   - for a failed task, reads the last task log lines and the guest's
//     state once, and reports [OutcomeFailed];
//   - otherwise reads fresh state until it shows the action's result:
//     start and reboot → "running" (reboot also needs an uptime younger
//     than the task, when Proxmox reports uptime), shutdown and stop →
//     "stopped", snapshot → the name in the snapshot list. HA-managed
//     guests need this: their hastart/hastop task ends OK before the HA
//     manager changes the guest.
//
// The wait is bounded by opts.Timeout (see [VerifyOptions]); when it ends
// first, the Outcome says [OutcomeTimeout] with the last task status and
// state seen. opts may be nil.
//
// A completed or failed outcome is written to the audit log (events
// [AuditCompleted] and [AuditFailed], with the UPID), best effort: the
// action already happened, so an audit failure is logged, not returned.
// Calling Verify twice for one receipt writes two records.
//
// The error is nil whenever an Outcome was established, including a failed
// task (see [Outcome.Err]). It is non-nil when verification could not run
// (an invalid receipt, a node not on the allowlist: nothing is read) or
// could not finish: the caller's ctx ended or Proxmox could not be read.
// In the latter cases the returned Outcome says [OutcomeSubmitted] with
// what was seen so far.
func (c *Client) Verify(ctx context.Context, r *Receipt, opts *VerifyOptions) (*Outcome, error) {
	start := time.Now()
	out, err := c.verify(ctx, r, opts, start)
	attrs := []slog.Attr{}
	if out != nil {
		attrs = append(attrs, slog.String("upid", out.UPID), slog.String("status", string(out.Status)))
	}
	if r != nil {
		attrs = append(attrs, slog.String("action", r.Action), slog.String("node", r.Target.Node), slog.Int("vmid", r.Target.VMID))
	}
	return out, c.logged(ctx, "Verify", start, err, attrs...)
}

// waiter is one running verification.
type waiter struct {
	c       *Client
	r       *Receipt
	ref     TaskRef
	exp     expectation
	opts    VerifyOptions
	start   time.Time
	timeout time.Duration
	out     *Outcome
	polls   int
}

func (c *Client) verify(ctx context.Context, r *Receipt, opts *VerifyOptions, start time.Time) (*Outcome, error) {
	if r == nil {
		return nil, &ValidationError{Fields: []FieldError{{Field: "receipt", Problem: "is required"}}}
	}
	var o VerifyOptions
	if opts != nil {
		o = *opts
	}
	if err := c.check(o); err != nil {
		return nil, err
	}
	ref, err := c.checkReceipt(r)
	if err != nil {
		return nil, err
	}
	exp, err := expectFor(r.Action, r.Target)
	if err != nil {
		return nil, err
	}
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = 5 * time.Second
	}
	timeout, clamped := c.effectiveTimeout(o.Timeout)
	w := &waiter{
		c: c, r: r, ref: ref, exp: exp, opts: o, start: start, timeout: timeout,
		out: &Outcome{Status: OutcomeSubmitted, UPID: r.UPID, TimeoutSeconds: timeout.Seconds(), TimeoutClamped: clamped},
	}
	// The timeout is a child context so the caller's ctx stays usable for
	// the last read after our own deadline; a context's timer leaves no
	// goroutine behind.
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = w.run(ctx, wctx)
	w.out.WaitedMS = time.Since(start).Milliseconds()
	if err != nil {
		return w.out, err
	}
	w.audit(ctx)
	w.progress(ProgressDone, w.out.Message)
	return w.out, nil
}

// checkReceipt validates a receipt that may not come from this package:
// the UPID must parse, the task node and the target node must be
// allowlisted, and the target must be a guest.
func (c *Client) checkReceipt(r *Receipt) (TaskRef, error) {
	u, err := upid.Parse(r.UPID)
	if err != nil || len(r.UPID) > maxUPIDLen {
		return TaskRef{}, &ValidationError{Fields: []FieldError{{Field: "upid", Problem: "is not a valid UPID"}}}
	}
	var fields []FieldError
	if !ValidNode(r.Target.Node) {
		fields = append(fields, FieldError{Field: "target.node", Problem: "must be a Proxmox node name"})
	}
	if r.Target.Type != TypeQEMU && r.Target.Type != TypeLXC {
		fields = append(fields, FieldError{Field: "target.type", Problem: "must be one of: qemu, lxc"})
	}
	if !ValidVMID(r.Target.VMID) {
		fields = append(fields, FieldError{Field: "target.vmid", Problem: fmt.Sprintf("must be a VMID from %d to %d", minVMID, maxVMID)})
	}
	if r.Target.Snapshot != "" && !snapnameRe.MatchString(r.Target.Snapshot) {
		fields = append(fields, FieldError{Field: "target.snapname", Problem: "must start with a letter and have 2 to 40 letters, digits, '_' or '-'"})
	}
	if len(fields) > 0 {
		return TaskRef{}, &ValidationError{Fields: fields}
	}
	if err := c.policy.checkNode(r.Target.Node); err != nil {
		return TaskRef{}, err
	}
	return c.checkTask(u.Node, r.UPID)
}

// run fills w.out. wctx carries the timeout; ctx is the caller's.
func (w *waiter) run(ctx, wctx context.Context) error {
	st, err := w.pollTask(wctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // the caller's ctx ended, not our timeout
	}
	if err != nil {
		return w.interrupted(ctx, err)
	}
	if st == nil || st.Running() {
		w.timedOut(ctx, "the task was still running")
		return nil
	}
	w.out.TaskStatus, w.out.ExitStatus = st.Status, st.ExitStatus
	if !st.Succeeded() {
		w.failed(ctx)
		return nil
	}
	if n, ok := warningCount(st.ExitStatus); ok && n > 0 {
		w.out.Warnings = n
		w.out.LogTail = w.c.taskLogTail(ctx, w.r.UPID, w.ref, DefaultLogTail)
	}
	reached, err := w.pollState(wctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return w.interrupted(ctx, err)
	}
	if !reached {
		w.timedOut(ctx, "")
		return nil
	}
	w.out.Verified = true
	if w.out.Warnings > 0 {
		w.out.Status = OutcomeCompletedWithWarnings
		w.out.Message = fmt.Sprintf("%s completed with warnings (%d): %s", w.what(), w.out.Warnings, w.out.Observed)
	} else {
		w.out.Status = OutcomeCompleted
		w.out.Message = fmt.Sprintf("%s completed OK: %s", w.what(), w.out.Observed)
	}
	return nil
}

// pollTask reads the task status until it stops; it returns the last
// status and nil when wctx ends first (a timeout, or the caller's ctx,
// which interrupted tells apart).
func (w *waiter) pollTask(wctx context.Context) (*TaskStatusResult, error) {
	b := newBackoff(w.opts)
	var last *TaskStatusResult
	for {
		if !b.wait(wctx) {
			return last, nil
		}
		st, err := w.c.taskStatus(wctx, w.r.UPID, w.ref)
		if err != nil {
			if wctx.Err() != nil {
				return last, nil
			}
			return last, err
		}
		last = st
		w.out.TaskPolls++
		w.out.TaskStatus = st.Status
		if !st.Running() {
			return st, nil
		}
		w.progress(ProgressTaskRunning, fmt.Sprintf("task %s still running (poll %d)", w.ref.Type, w.out.TaskPolls))
	}
}

// pollState reads fresh state until it shows the expected result, and
// reports whether it did before wctx ended.
func (w *waiter) pollState(wctx context.Context) (bool, error) {
	b := newBackoff(w.opts)
	for {
		if !b.wait(wctx) {
			return false, nil
		}
		ok, err := w.observe(wctx)
		if err != nil {
			if wctx.Err() != nil {
				return false, nil
			}
			return false, err
		}
		if ok {
			return true, nil
		}
		phase := ProgressWaitingForState
		msg := fmt.Sprintf("task ended OK; waiting for %s (now: %s)", w.expected(), w.out.Observed)
		if w.r.HAManaged || (w.out.After != nil && w.out.After.HAManaged) {
			phase = ProgressWaitingForHA
			msg = fmt.Sprintf("the HA manager accepted the request; waiting for %s (now: %s)", w.expected(), w.out.Observed)
		}
		w.progress(phase, msg)
	}
}

// observe does one fresh read and records it; it reports whether the
// expected result is there.
func (w *waiter) observe(ctx context.Context) (bool, error) {
	w.out.StatePolls++
	if w.exp.snapshot != "" {
		present, err := w.c.snapshotPresent(ctx, w.r.Target)
		if err != nil {
			return false, err
		}
		if present {
			w.out.Observed = "snapshot " + w.exp.snapshot + " present"
		} else {
			w.out.Observed = "snapshot " + w.exp.snapshot + " not in the snapshot list"
		}
		return present, nil
	}
	s, uptime, err := w.c.readVerifyState(ctx, w.r.Target)
	if err != nil {
		return false, err
	}
	w.out.After, w.out.Uptime = &s, uptime
	w.out.Observed = s.Status
	if s.Paused() {
		w.out.Observed += " (paused)"
	}
	if s.Status != w.exp.status || (w.exp.status == "running" && s.Paused()) {
		return false, nil
	}
	if w.exp.reboot && uptime > 0 {
		// A guest that restarted after the task began has an uptime no
		// larger than the time since then. Uptime 0 while running means
		// Proxmox did not report it: then "running" is all we can check.
		since := time.Since(w.ref.StartTime) + rebootClockSlack
		if time.Duration(uptime)*time.Second > since {
			w.out.Observed = fmt.Sprintf("running, but its uptime (%d s) predates the reboot", uptime)
			return false, nil
		}
		w.out.Observed = fmt.Sprintf("running again (uptime %d s)", uptime)
	}
	return true, nil
}

// failed records a task that stopped with an error: its log tail and the
// state after, read with the caller's ctx (the wait's own deadline may
// have passed, and these reads explain the failure).
func (w *waiter) failed(ctx context.Context) {
	w.out.Status = OutcomeFailed
	w.out.LogTail = w.c.taskLogTail(ctx, w.r.UPID, w.ref, DefaultLogTail)
	// Whatever the state shows, it is not the failed task's result, so
	// Verified stays false; the read only tells the caller where things are.
	_, _ = w.observe(ctx)
	w.out.Message = fmt.Sprintf("%s FAILED: %s", w.what(), w.out.ExitStatus)
}

// timedOut records a timeout. When the task was still running the state
// was not read during the wait, so it is read once more for the record.
func (w *waiter) timedOut(ctx context.Context, why string) {
	w.out.Status = OutcomeTimeout
	if why != "" && ctx.Err() == nil {
		_, _ = w.observe(ctx)
	}
	secs := strconv.FormatFloat(w.timeout.Seconds(), 'f', -1, 64)
	if why == "" {
		why = "the task ended " + w.out.ExitStatus + " but " + w.expected() + " was not observed (last seen: " + w.out.Observed + ")"
	}
	w.out.Message = fmt.Sprintf("%s: %s after %s s; check task %s later", w.what(), why, secs, w.r.UPID)
}

// interrupted handles an error from polling: the caller's ctx ending, or
// Proxmox failing to answer. Either way only submission is known.
func (w *waiter) interrupted(ctx context.Context, err error) error {
	w.out.Status = OutcomeSubmitted
	if ctx.Err() != nil {
		err = ctx.Err()
		w.out.Message = fmt.Sprintf("%s was submitted; stopped waiting (%v) — check task %s", w.what(), err, w.r.UPID)
		return err
	}
	w.out.Message = fmt.Sprintf("%s was submitted, but its outcome could not be read (%v) — check task %s", w.what(), err, w.r.UPID)
	return err
}

func (w *waiter) what() string {
	if w.exp.snapshot != "" {
		return "snapshot " + w.exp.snapshot + " of " + w.r.Target.guestString()
	}
	return w.r.Action + " of " + w.r.Target.guestString()
}

func (w *waiter) expected() string {
	switch {
	case w.exp.snapshot != "":
		return "snapshot " + w.exp.snapshot + " in the snapshot list"
	case w.exp.reboot:
		return "the guest running again after the reboot"
	}
	return "the guest " + w.exp.status
}

func (w *waiter) progress(phase ProgressPhase, msg string) {
	if w.opts.OnProgress == nil {
		return
	}
	w.polls++
	w.opts.OnProgress(Progress{Phase: phase, Message: msg, Poll: w.polls, Elapsed: time.Since(w.start), Timeout: w.timeout})
}

// audit writes the completed/failed record. Only outcomes that say what
// happened are recorded; a timeout adds nothing to the submitted record.
func (w *waiter) audit(ctx context.Context) {
	var ev AuditEvent
	var reason string
	switch w.out.Status {
	case OutcomeCompleted, OutcomeCompletedWithWarnings:
		ev, reason = AuditCompleted, "verified: "+w.out.Observed
		if w.out.Warnings > 0 {
			reason = "task " + w.out.ExitStatus + "; " + reason
		}
	case OutcomeFailed:
		ev, reason = AuditFailed, "task failed: "+w.out.ExitStatus
	default:
		return
	}
	if w.c.audit == nil {
		return
	}
	op := "GuestPower"
	if w.exp.snapshot != "" {
		op = "SnapshotGuest"
	}
	m := &mutation{op: op, action: w.r.Action, target: w.r.Target}
	if err := w.c.record(ctx, m, ev, line(reason, maxErrorText), w.r.UPID); err != nil {
		w.c.log.ErrorContext(ctx, "audit record of a verified outcome could not be written",
			slog.String("upid", w.r.UPID), slog.String("error", err.Error()))
	}
}

// guestString names the guest without the snapshot: "pve1/qemu/101".
func (t Target) guestString() string {
	t.Snapshot = ""
	return t.String()
}

// backoff paces polls like [Client.WaitTask]: the first poll at once, then
// Interval, growing by half up to MaxInterval.
type backoff struct {
	next, max time.Duration
	first     bool
	timer     *time.Timer
}

func newBackoff(o VerifyOptions) *backoff {
	return &backoff{next: o.Interval, max: o.MaxInterval, first: true}
}

// wait sleeps until the next poll and reports false when ctx ended first.
// It stops its timer before returning, so nothing outlives the wait.
func (b *backoff) wait(ctx context.Context) bool {
	if b.first {
		b.first = false
		return ctx.Err() == nil
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(b.next+b.next/2, b.max)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// readVerifyState is readState plus uptime. It duplicates readState's
// conversion so that the precondition read stays exactly as it is.
func (c *Client) readVerifyState(ctx context.Context, t Target) (GuestState, int64, error) {
	var raw rawVerifyStatus
	if err := c.get(ctx, guestPath(t, "status", "current"), nil, &raw); err != nil {
		return GuestState{}, 0, err
	}
	return GuestState{
		Status:    line(string(raw.Status), 16),
		QMPStatus: line(string(raw.QMPStatus), 16),
		Name:      line(string(raw.Name), maxNameLen),
		Lock:      line(string(raw.Lock), 32),
		Template:  bool(raw.Template),
		HAManaged: bool(raw.HA.Managed),
		HAState:   line(string(raw.HA.State), 32),
	}, max(int64(raw.Uptime), 0), nil
}

// snapshotPresent reports whether the guest's snapshot list names t.Snapshot
// (compared exactly, like Proxmox's config sections).
func (c *Client) snapshotPresent(ctx context.Context, t Target) (bool, error) {
	var snaps []rawSnapshot
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &snaps); err != nil {
		return false, err
	}
	for _, s := range snaps {
		if string(s.Name) == t.Snapshot {
			return true, nil
		}
	}
	return false, nil
}

// taskLogTail returns the last n lines of a task log through
// [Client.TaskLog]'s reader (sanitized, capped, secret-looking arguments
// redacted), or nil when the log cannot be read: the tail explains a
// failure, it must not hide it.
func (c *Client) taskLogTail(ctx context.Context, id string, ref TaskRef, n int) []string {
	res, err := c.taskLog(ctx, TaskLogInput{Node: ref.Node, UPID: id, Lines: n}, ref)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(res.Lines))
	for _, l := range res.Lines {
		out = append(out, l.Text)
	}
	return out
}

// warningCount parses "WARNINGS: <n>".
func warningCount(exit string) (int, bool) {
	s, ok := strings.CutPrefix(exit, "WARNINGS: ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// waitIfAsked runs the mutation and, when wait is set, verifies it. Once a
// request was submitted the receipt is returned even with an error, so the
// caller always learns the UPID of something that was sent.
func (c *Client) waitIfAsked(ctx context.Context, wait *VerifyOptions, m *mutation) (*Receipt, error) {
	r, err := c.run(ctx, m)
	if err != nil || wait == nil {
		return r, err
	}
	out, err := c.Verify(ctx, r, wait)
	r.Outcome = out
	if err != nil {
		return r, err
	}
	return r, out.Err()
}
