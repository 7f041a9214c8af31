package proxmoxsafe

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// expectation is what the fresh state must show for an action to count as
// done.
type expectation struct {
	status   string // "running" or "stopped" for power actions
	reboot   bool   // also require an uptime younger than the task
	snapshot string // snapshot name that must be listed
	paused   bool   // running and paused (suspend)
	// snapOp is "rollback" (the current state's parent must be snapshot)
	// or "delsnapshot" (snapshot must be gone); "" means snapshot must be
	// listed.
	snapOp string
	lock   string // a lock the state must show ("suspended" after a hibernation)
	gone   bool   // the guest must be gone from /cluster/resources (destroy)
	// created: the receipt's NewGuest must exist with its configuration
	// (clone, create; provision_verify.go).
	created bool
	node    string // the node /cluster/resources must show the guest on (migrate)
	// config: the receipt's Changes must read back (config_verify.go).
	config bool
}

func expectFor(action string, t Target) (expectation, error) {
	switch action {
	case string(ActionStart):
		return expectation{status: "running"}, nil
	case string(ActionReboot), "reset":
		// A reset restarts the guest like a reboot, only without asking it.
		return expectation{status: "running", reboot: true}, nil
	case string(ActionShutdown), string(ActionStop):
		return expectation{status: "stopped"}, nil
	case "resume":
		return expectation{status: "running"}, nil
	case "destroy":
		return expectation{gone: true}, nil
	case "rollback", "delsnapshot":
		if t.Snapshot == "" {
			break
		}
		return expectation{snapshot: t.Snapshot, snapOp: action}, nil
	case "snapshot":
		if t.Snapshot == "" {
			break
		}
		return expectation{snapshot: t.Snapshot}, nil
	case "clone", "create":
		return expectation{created: true}, nil
	case "resize", "config":
		return expectation{config: true}, nil
	}
	return expectation{}, &ValidationError{Fields: []FieldError{{Field: "action", Problem: "is not an action Verify knows (start, shutdown, reboot, reset, stop, suspend, resume, destroy; snapshot, rollback, delsnapshot with a snapshot name; clone, create with a new guest; migrate with a target node)"}}}
}

// expectForTask refines expectFor by the task type where one action has
// two effects: a suspend task qmpause pauses the VM, qmsuspend (todisk)
// hibernates it (stopped, locked "suspended").
func expectForTask(action string, t Target, ref TaskRef) (expectation, error) {
	if action == "suspend" {
		if ref.Type == "qmsuspend" {
			return expectation{status: "stopped", lock: "suspended"}, nil
		}
		return expectation{status: "running", paused: true}, nil
	}
	return expectFor(action, t)
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
	exp     expectation
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
	ref, err := c.checkReceipt(r)
	if err != nil {
		return nil, err
	}
	var exp expectation
	if r.Action == "migrate" {
		exp, err = c.expectMigration(r) // migrate_verify.go
	} else {
		exp, err = expectForTask(r.Action, r.Target, ref)
	}
	if err == nil && exp.config && len(r.Changes) == 0 {
		err = &ValidationError{Fields: []FieldError{{Field: "receipt.changes", Problem: "is required to verify a " + r.Action}}}
	}
	if err != nil {
		return nil, err
	}
	timeout, clamped := c.effectiveTimeout(o.Timeout)
	w := &waiter{
		c: c, r: r, ref: ref, exp: exp, opts: o, start: start, timeout: timeout,
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
// the target node must be allowlisted, and the target must be a guest.
func (c *Client) checkReceipt(r *Receipt) (TaskRef, error) {
	t := r.Target
	if r.Synchronous && r.UPID == "" {
		// Applied before Proxmox answered: no task, only the guest to read.
		if err := c.check(syncReceiptCheck{Node: t.Node, Type: t.Type, VMID: t.VMID}); err != nil {
			return TaskRef{}, err
		}
		return TaskRef{}, c.policy.checkNode(t.Node)
	}
	if err := c.check(receiptCheck{UPID: r.UPID, Node: t.Node, Type: t.Type, VMID: t.VMID, Snapshot: t.Snapshot}); err != nil {
		return TaskRef{}, err
	}
	if err := c.policy.checkNode(t.Node); err != nil {
		return TaskRef{}, err
	}
	if err := c.checkNewGuest(r); err != nil { // provision_verify.go
		return TaskRef{}, err
	}
	return c.checkTask(TaskStatusInput{Node: taskRefOf(r.UPID).Node, UPID: r.UPID})
}

// run fills w.out. wctx carries the timeout; ctx is the caller's.
func (w *waiter) run(ctx, wctx context.Context) error {
	if w.r.Synchronous && w.r.UPID == "" {
		return w.runSync(ctx, wctx) // config_verify.go
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
		// known (issue 15 §4: an unknown status is not "ended", nor
		// "running").
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

// observe does one fresh read and records it; it reports whether the
// expected result is there.
func (w *waiter) observe(ctx context.Context) (bool, error) {
	w.out.StatePolls++
	if w.exp.created {
		return w.observeCreated(ctx)
	}
	if w.exp.node != "" {
		return w.observeNode(ctx) // migrate_verify.go
	}
	if w.exp.config {
		return w.observeConfig(ctx) // config_verify.go
	}
	if w.exp.snapOp == "rollback" {
		parent, err := w.c.currentParent(ctx, w.r.Target)
		if err != nil {
			return false, err
		}
		w.out.Observed = "current state based on " + parent
		if parent == "" {
			w.out.Observed = "current state based on no snapshot"
		}
		return parent == w.exp.snapshot, nil
	}
	if w.exp.gone {
		listed, err := w.c.guestListed(ctx, w.r.Target)
		if err != nil {
			return false, err
		}
		w.out.Observed = "gone from /cluster/resources"
		if listed != "" {
			w.out.Observed = "still in /cluster/resources (" + listed + ")"
		}
		return listed == "", nil
	}
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
		return present == (w.exp.snapOp != "delsnapshot"), nil
	}
	s, uptime, err := w.c.readState(ctx, w.r.Target)
	if err != nil {
		return false, err
	}
	w.out.After, w.out.Uptime = &s, uptime
	w.out.Observed = s.Status
	if s.Paused() {
		w.out.Observed += " (paused)"
	}
	if w.exp.lock != "" && s.Lock != "" {
		w.out.Observed += ", locked (" + s.Lock + ")"
	}
	if s.Status != w.exp.status || (w.exp.status == "running" && s.Paused() != w.exp.paused) || (w.exp.lock != "" && s.Lock != w.exp.lock) {
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
	case w.exp.created:
		return "the new guest " + w.r.NewGuest.String() + " unlocked with the requested configuration"
	case w.exp.node != "":
		return "the guest on node " + w.exp.node
	case w.exp.config:
		return "the changes read back from the guest's config"
	case w.exp.snapOp == "rollback":
		return "the current state based on snapshot " + w.exp.snapshot
	case w.exp.gone:
		return "the guest gone from /cluster/resources"
	case w.exp.snapOp == "delsnapshot":
		return "snapshot " + w.exp.snapshot + " gone from the snapshot list"
	case w.exp.snapshot != "":
		return "snapshot " + w.exp.snapshot + " in the snapshot list"
	case w.exp.reboot:
		return "the guest running again after the reboot"
	case w.exp.paused:
		return "the guest paused"
	case w.exp.lock != "":
		return "the guest " + w.exp.status + " and locked (" + w.exp.lock + ")"
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
	op := w.r.op
	switch {
	case op != "":
	case w.exp.snapshot != "":
		op = OpSnapshotGuest
	default:
		op = OpGuestPower
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
func (c *Client) waitIfAsked(ctx context.Context, wait *WaitOptions, m *mutation) (*Receipt, error) {
	if m.planOnly {
		wait = nil // nothing is submitted, nothing to wait for
	}
	// With a wait, the guest stays claimed until the outcome is known.
	m.holdClaim = wait != nil
	r, err := c.run(ctx, m)
	if m.release != nil {
		defer m.release()
	}
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
