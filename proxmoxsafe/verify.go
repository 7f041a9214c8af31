package proxmoxsafe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// verifier is how an operation proves a receipt's effect from fresh
// reads; each mutation that returns receipts declares its own
// (operation.verify), so no receipt passes through another operation's
// proof.
type verifier struct {
	// needs names what a receipt must carry beyond its action ("a
	// snapshot name"), for the refusal that lists the actions Verify
	// knows; "" for nothing.
	needs string
	// receipt, when set, checks what the receipt must carry before its
	// task is read (a clone's new guest).
	receipt func(c *Client, r *Receipt) error
	// proof returns what the wait polls for r, whose task is ref. It
	// returns errUnknownAction for an action it does not prove (a
	// snapshot action without a snapshot name).
	proof func(c *Client, r *Receipt, ref TaskRef) (proof, error)
}

// proof is what one verification waits for.
type proof struct {
	// what names the mutation in messages: "start of pve1/qemu/101",
	// "snapshot s1 of pve1/qemu/101".
	what string
	// expected says what the fresh state must show: "the guest running".
	expected string
	// observe does one fresh read, records what it saw in w.out and
	// reports whether it shows the expected result.
	observe func(ctx context.Context, w *waiter) (bool, error)
	// ofSnapshot marks the proofs of snapshot actions: the audit record of
	// a receipt built by hand names [OpSnapshotGuest] for them and
	// [OpGuestPower] for the others, as it always did.
	ofSnapshot bool
}

// errUnknownAction is what a proof returns for an action it does not
// prove; verify turns it into the refusal listing what Verify knows.
var errUnknownAction = errors.New("unknown action")

// verifierFor returns the verifier of r: its operation's, when the
// receipt names one that declares its action, else the first operation's
// that declares the action (a receipt from elsewhere); nil when none does.
func verifierFor(r *Receipt) *verifier {
	for _, op := range operations {
		if op.info.Name == r.op && op.verify != nil {
			if _, ok := op.info.Action(r.Action); ok {
				return op.verify
			}
		}
	}
	for _, op := range operations {
		if op.verify == nil {
			continue
		}
		if _, ok := op.info.Action(r.Action); ok {
			return op.verify
		}
	}
	return nil
}

// unknownActionError is the refusal of a receipt whose action Verify
// cannot prove. It lists the actions of every operation with a verifier,
// grouped by what their receipts must carry.
func unknownActionError() error {
	var needs []string
	groups := map[string][]string{}
	for _, op := range operations {
		if op.verify == nil {
			continue
		}
		n := op.verify.needs
		if _, seen := groups[n]; !seen {
			needs = append(needs, n)
		}
		for _, a := range op.info.Actions {
			if !slices.Contains(groups[n], a.Name) {
				groups[n] = append(groups[n], a.Name)
			}
		}
	}
	parts := make([]string, len(needs))
	for i, n := range needs {
		parts[i] = strings.Join(groups[n], ", ")
		if n != "" {
			parts[i] += " with " + n
		}
	}
	return &ValidationError{Fields: []FieldError{{Field: "action", Problem: "is not an action Verify knows (" + strings.Join(parts, "; ") + ")"}}}
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
//     "stopped", snapshot → the name in the snapshot list, destroy → no
//     entry for the VMID in /cluster/resources. HA-managed
//     guests need this: their hastart/hastop task ends OK before the HA
//     manager changes the guest.
//
// The wait is bounded by opts.Timeout (see [WaitOptions]); when it ends
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
func (c *Client) Verify(ctx context.Context, r *Receipt, opts *WaitOptions) (*Outcome, error) {
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
	proof   proof
	opts    WaitOptions
	start   time.Time
	timeout time.Duration
	out     *Outcome
	polls   int
}

func (c *Client) verify(ctx context.Context, r *Receipt, opts *WaitOptions, start time.Time) (*Outcome, error) {
	if r == nil {
		return nil, &ValidationError{Fields: []FieldError{{Field: "receipt", Problem: "is required"}}}
	}
	o, err := c.waitOptions(opts)
	if err != nil {
		return nil, err
	}
	v := verifierFor(r)
	ref, err := c.checkReceipt(r, v)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, unknownActionError()
	}
	p, err := v.proof(c, r, ref)
	if errors.Is(err, errUnknownAction) {
		err = unknownActionError()
	}
	if err != nil {
		return nil, err
	}
	timeout, clamped := c.effectiveTimeout(o.Timeout)
	w := &waiter{
		c: c, r: r, ref: ref, proof: p, opts: o, start: start, timeout: timeout,
		out: &Outcome{Status: OutcomeSubmitted, UPID: r.UPID, Timeout: timeout, TimeoutClamped: clamped},
	}
	// The timeout is a child context so the caller's ctx stays usable for
	// the last read after our own deadline; a context's timer leaves no
	// goroutine behind.
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = w.run(ctx, wctx)
	w.out.Waited = time.Since(start)
	if err != nil {
		return w.out, err
	}
	w.audit(ctx)
	w.progress(ProgressDone, w.out.Message)
	return w.out, nil
}

// receiptCheck is what checkReceipt validates of a receipt that may not
// come from this package; the JSON names are the ones errors report.
type receiptCheck struct {
	UPID     string    `json:"upid" validate:"required,max=255,pve_upid"`
	Node     string    `json:"target.node" validate:"required,pve_node"`
	Type     GuestType `json:"target.type" validate:"required,oneof=qemu lxc"`
	VMID     int       `json:"target.vmid" validate:"required,pve_vmid"`
	Snapshot string    `json:"target.snapname" validate:"omitempty,pve_snapname"`
}

// syncReceiptCheck is receiptCheck for a receipt without a task.
type syncReceiptCheck struct {
	Node string    `json:"target.node" validate:"required,pve_node"`
	Type GuestType `json:"target.type" validate:"required,oneof=qemu lxc"`
	VMID int       `json:"target.vmid" validate:"required,pve_vmid"`
}

// checkReceipt validates a receipt: the UPID must parse, the task node and
// the target node must be allowlisted, the target must be a guest, and
// what its verifier v (nil: none) needs must be there.
func (c *Client) checkReceipt(r *Receipt, v *verifier) (TaskRef, error) {
	t := r.Target
	if r.Synchronous && r.UPID == "" {
		// Applied before Proxmox answered: no task, only the guest to read.
		if err := c.check(syncReceiptCheck{Node: t.Node, Type: t.Type, VMID: t.VMID}); err != nil {
			return TaskRef{}, err
		}
		if err := c.policy.checkNode(t.Node); err != nil {
			return TaskRef{}, err
		}
		// A receipt built by hand may claim it for any action: what the
		// verifier needs is checked all the same.
		return TaskRef{}, v.checkReceipt(c, r)
	}
	if err := c.check(receiptCheck{UPID: r.UPID, Node: t.Node, Type: t.Type, VMID: t.VMID, Snapshot: t.Snapshot}); err != nil {
		return TaskRef{}, err
	}
	if err := c.policy.checkNode(t.Node); err != nil {
		return TaskRef{}, err
	}
	if err := v.checkReceipt(c, r); err != nil {
		return TaskRef{}, err
	}
	return c.checkTask(TaskStateInput{Node: taskRefOf(r.UPID).Node, UPID: r.UPID})
}

// checkReceipt checks what v needs of r beyond the common fields; nil for
// a nil v or one that needs nothing more.
func (v *verifier) checkReceipt(c *Client, r *Receipt) error {
	if v == nil || v.receipt == nil {
		return nil
	}
	return v.receipt(c, r)
}

// run fills w.out. wctx carries the timeout; ctx is the caller's.
func (w *waiter) run(ctx, wctx context.Context) error {
	if w.r.Synchronous && w.r.UPID == "" {
		return w.runSync(ctx, wctx)
	}
	st, err := w.pollTask(wctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // the caller's ctx ended, not our timeout
	}
	if err != nil {
		return w.interrupted(ctx, err)
	}
	if st == nil {
		// No status poll answered in time: whether the task ended is not
		// known, and an unknown status is neither "ended" nor "running":
		// the outcome says so instead of guessing.
		w.timedOut(ctx, "the task's status could not be read")
		w.out.Message = fmt.Sprintf("%s: the task's status could not be read within %s s; it may still be running: check task %s later",
			w.what(), strconv.FormatFloat(w.timeout.Seconds(), 'f', -1, 64), w.r.UPID)
		return nil
	}
	if st.Running() {
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

// runSync verifies a receipt Proxmox answered without a task: only the
// read-back remains.
func (w *waiter) runSync(ctx, wctx context.Context) error {
	reached, err := w.pollState(wctx)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		w.out.Status = OutcomeSubmitted
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		w.out.Message = fmt.Sprintf("%s was applied by Proxmox, but reading it back failed (%v); read the guest's config", w.what(), err)
		return err
	}
	if !reached {
		w.out.Status = OutcomeTimeout
		w.out.Message = fmt.Sprintf("%s was applied by Proxmox, but after %s s the config does not show it (%s); read the guest's config later",
			w.what(), strconv.FormatFloat(w.timeout.Seconds(), 'f', -1, 64), w.out.Observed)
		return nil
	}
	w.out.Verified, w.out.Status = true, OutcomeCompleted
	w.out.Message = fmt.Sprintf("%s completed OK: %s", w.what(), w.out.Observed)
	return nil
}

// pollTask reads the task status until it stops; it returns the last
// status and nil when wctx ends first (a timeout, or the caller's ctx,
// which interrupted tells apart).
func (w *waiter) pollTask(wctx context.Context) (*TaskStatusResult, error) {
	b := newBackoff(w.opts.Interval, w.opts.MaxInterval)
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
	b := newBackoff(w.opts.Interval, w.opts.MaxInterval)
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

// observe does one fresh read through the operation's proof and records
// it; it reports whether the expected result is there.
func (w *waiter) observe(ctx context.Context) (bool, error) {
	w.out.StatePolls++
	return w.proof.observe(ctx, w)
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

func (w *waiter) what() string { return w.proof.what }

func (w *waiter) expected() string { return w.proof.expected }

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
	op := w.r.op
	switch {
	case op != "":
	case w.proof.ofSnapshot:
		op = OpSnapshotGuest
	default:
		op = OpGuestPower
	}
	m := &mutation{decl: declared(op), mutationCall: mutationCall{action: w.r.Action, target: w.r.Target}}
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
