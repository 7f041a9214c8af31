package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"
)

// mutation is one call of a mutation travelling through the safety
// pipeline: validate → policy → preconditions → approval → audit → one
// request. Each step is its own function so the order is visible in
// runSteps. Its three parts change at different times: the declaration
// never, the call's input when the call is made (prepare may complete
// it), the run state as the steps go.
type mutation struct {
	// decl is what the operation declares: its name, class and method.
	decl *operation
	// mutationCall is what this call asks.
	mutationCall
	// state is what the run learned on the way.
	state runState
}

// mutationCall is one call's input: the action, the target and the
// request, and the call's own hooks into the steps.
type mutationCall struct {
	action string
	input  any // the validated input struct
	target Target
	// params change what the mutation does beyond action and target; they
	// are part of the approval phrase (see ApprovalParam).
	params []ApprovalParam
	// given is the caller's approval text.
	given string
	// planOnly stops before the approval and returns the plan (see Plan).
	planOnly bool
	// path and form are the single request the mutation sends, with the
	// declaration's method (see mutation.method).
	path string
	form url.Values
	// planForm, when set, is what a plan shows instead of form (free
	// text bound by digest).
	planForm url.Values
	// requestMethod and apiPath are a gateway write's method and API
	// path, the caller's, for the request and the audit record; "" for
	// every other mutation.
	requestMethod string
	apiPath       string
	// alsoNodes are other nodes the mutation touches (a migration's
	// or a clone's target); the policy step requires each on the allowlist too.
	alsoNodes []string
	// newGuest is the guest the mutation creates (provision), kept in
	// receipts and plans for the completion proof.
	newGuest *NewGuest
	// answersNull marks an endpoint that may apply the change and answer
	// null instead of a task id (PUT …/config): the receipt then says it
	// was applied synchronously, with no UPID.
	answersNull bool
	// taskless, when set, judges an answer that is not a task id before
	// it is parsed as one: vzdump answers "OK" and starts nothing when the
	// guest is not on the node. A non-nil error is the call's result.
	taskless func(answer string) error

	// The call's hooks, in the order the steps call them. checkInput,
	// when set, checks what the validate tags cannot (e.g. config values
	// against the schema) right after them: still before any I/O. allow,
	// when set, is the operation's own policy check after the class's
	// (e.g. the config key allowlist). prepare runs after the policy step
	// and before the claim, and may complete the call from the cluster
	// (the next free VMID). fresh replaces the read of the target's
	// status/current in the fresh-state step and its recheck: a guest to
	// be created has none. precondition checks the fresh state and
	// returns a refusal or nil; effect describes what approving will do,
	// for the approver. decorate, when set, adds the mutation's own
	// details to the plan or the receipt (a migration's target node,
	// precheck and HA note); changes are the config changes the receipt
	// carries ([Receipt.Changes]).
	checkInput   func() error
	allow        func(p *policy) error
	prepare      func(ctx context.Context, m *mutation) error
	fresh        func(ctx context.Context) (GuestState, error)
	precondition func(ctx context.Context, s GuestState) error
	effect       func(s GuestState) string
	decorate     func(r *Receipt)
	changes      func() []ConfigChange
	// prefetch are the reads precondition needs that do not depend on
	// the guest's state; they go out with the pipeline's own reads
	// (pipeline_reads.go).
	prefetch []prefetcher
}

// runState is what a run learns on the way.
type runState struct {
	// approvedBy names the approver that approved, for the audit record.
	approvedBy string
	// shown is what the approvers were shown (its Binding is what an
	// approval covers); the re-check after a slow approval refuses when
	// the request rebuilt from fresh reads is no longer that.
	shown ApprovalRequest
	// approvalNote is what the approver added with NoteApproval.
	approvalNote ApprovalNote
	// release ends the claim on the guest (see claim); nil before it.
	release func()
	// holdClaim keeps the claim after run returns, for a wait that follows.
	holdClaim bool
}

// name is the operation's name, as the audit records give it.
func (m *mutation) name() Operation { return m.decl.info.Name }

// class is the operation's mutation class.
func (m *mutation) class() Class { return m.decl.info.Class }

// method is the request's method: the gateway caller's, else the
// declaration's (a container's where it differs), else POST.
func (m *mutation) method() string {
	switch info := m.decl.info; {
	case m.requestMethod != "":
		return m.requestMethod
	case m.target.Type == TypeLXC && info.ContainerMethod != "":
		return info.ContainerMethod
	case info.Method != "":
		return info.Method
	}
	return http.MethodPost
}

// declared returns the declaration of the operation named op; a name the
// list does not have (an adapter's refusal record) gets a declaration of
// its name alone.
func declared(op Operation) *operation {
	for _, d := range operations {
		if d.info.Name == op {
			return d
		}
	}
	return &operation{info: OperationInfo{Name: op}}
}

// waitIfAsked runs the mutation and, when wait is set, verifies it. Once a
// request was submitted the receipt is returned even with an error, so the
// caller always learns the UPID of something that was sent.
func (c *Client) waitIfAsked(ctx context.Context, wait *WaitOptions, m *mutation) (*Receipt, error) {
	if m.planOnly {
		wait = nil // nothing is submitted, nothing to wait for
	}
	// With a wait, the guest stays claimed until the outcome is known.
	m.state.holdClaim = wait != nil
	r, err := c.run(ctx, m)
	if m.state.release != nil {
		defer m.state.release()
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

func (c *Client) run(ctx context.Context, m *mutation) (*Receipt, error) {
	start := time.Now()
	rec, err := c.runSteps(ctx, m)
	if m.state.release != nil && (err != nil || !m.state.holdClaim) {
		m.state.release()
	}
	attrs := []slog.Attr{
		slog.String("action", m.action),
		slog.String("node", m.target.Node),
		slog.Int("vmid", m.target.VMID),
	}
	if rec != nil {
		attrs = append(attrs, slog.String("upid", rec.UPID))
	}
	return rec, c.logged(ctx, m.name(), start, err, attrs...)
}

func (c *Client) runSteps(ctx context.Context, m *mutation) (*Receipt, error) {
	state, err := c.admit(ctx, m)
	if err != nil {
		return nil, err
	}
	if m.planOnly {
		return m.decorated(c.plan(m, state)), nil
	}
	if state, err = c.approveFresh(ctx, m, state); err != nil {
		return nil, err
	}
	r, err := c.submit(ctx, m, state)
	if r == nil {
		return nil, err
	}
	// err, if any, is a *SentBeforeCancelError: the receipt stands.
	return m.decorated(r), err
}

// decorated applies m.decorate to r.
func (m *mutation) decorated(r *Receipt) *Receipt {
	if m.decorate != nil {
		m.decorate(r)
	}
	return r
}

// admit runs the checks of the pipeline, in order: validate, policy, claim
// the guest, read fresh state, protection by name/tag/pool, the
// mutation's precondition, no running task. Every refusal is audited. It
// returns the fresh state the approval and the request rely on.
func (c *Client) admit(ctx context.Context, m *mutation) (GuestState, error) {
	if err := c.check(m.input); err != nil {
		// The target may be garbage: record only what the refusal says.
		c.auditRefusal(ctx, &mutation{decl: m.decl}, err)
		return GuestState{}, err
	}
	if m.checkInput != nil {
		if err := m.checkInput(); err != nil {
			c.auditRefusal(ctx, &mutation{decl: m.decl}, err)
			return GuestState{}, err
		}
	}
	if err := c.policy.checkMutation(m.class(), m.target); err != nil {
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if m.allow != nil {
		if err := m.allow(c.policy); err != nil {
			c.auditRefusal(ctx, m, err)
			return GuestState{}, err
		}
	}
	for _, n := range m.alsoNodes {
		if err := c.policy.checkNode(n); err != nil {
			c.auditRefusal(ctx, m, err)
			return GuestState{}, err
		}
	}
	if m.prepare != nil {
		if err := m.prepare(ctx, m); err != nil {
			c.auditRefusal(ctx, m, err)
			return GuestState{}, err
		}
	}
	if err := c.claim(m); err != nil {
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	// The reads go out at once (pipeline_reads.go) and are judged in
	// this order. A guest still to be created has no name, tags or pool
	// yet; the provision precondition checks the pool it will join.
	reads := c.startReads(ctx, m, m.fresh == nil)
	defer reads.stop()
	state, err := reads.state.wait()
	if err != nil {
		err = &PreconditionReadError{Err: err}
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if err := c.checkProtected(m.target, state, reads.protectedBy); err != nil {
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if err := m.precondition(ctx, state); err != nil {
		var re *RefusalError
		if !errors.As(err, &re) {
			err = &PreconditionReadError{Err: err}
		}
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if err := noActiveTask(m.target, state, reads.tasks.wait); err != nil {
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if err := reads.recentBackup(c, m); err != nil {
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	return state, nil
}

// approveFresh runs the approval and, after an approver that may have
// taken time, re-reads the state and re-runs the checks. It returns the
// state the request relies on; refusals are audited.
func (c *Client) approveFresh(ctx context.Context, m *mutation, state GuestState) (GuestState, error) {
	approver, err := c.approve(ctx, m, state)
	if err != nil {
		c.auditRefusal(ctx, m, err)
		return state, err
	}
	if _, instant := approver.(PhraseApprover); !instant && approver != nil {
		// The approval may have taken minutes: act only on the state it
		// was given for.
		if state, err = c.recheck(ctx, m, state); err != nil {
			c.auditRefusal(ctx, m, err)
			return state, err
		}
	}
	return state, nil
}

// submit writes the "approved" record, sends the mutation's one request
// and records its UPID. Nothing is sent when the record cannot be written.
// When ctx ended while the request was being sent, it returns the receipt
// with a *SentBeforeCancelError.
func (c *Client) submit(ctx context.Context, m *mutation, state GuestState) (*Receipt, error) {
	if err := c.record(ctx, m, AuditApproved, "", ""); err != nil {
		return nil, refuse(ErrAudit, "the audit record could not be written (%v)", err)
	}
	var id string
	method := m.method()
	// An endpoint that may answer null decodes into a pointer: null leaves
	// it nil (applied, no task), a string is the task id.
	var out any = &id
	var idp *string
	if m.answersNull {
		out = &idp
	}
	// Once the request is being sent, the caller's cancellation no longer
	// abandons it (sent_cancelled.go): what Proxmox answers is recorded
	// on sent, a context that outlives the caller's.
	sent := context.WithoutCancel(ctx)
	if err := c.upstreamErr(c.api.DoCommitted(ctx, method, m.path, m.form, out)); err != nil {
		err = mayHaveRun(err)
		if aerr := c.record(sent, m, AuditFailed, err.Error(), ""); aerr != nil {
			c.log.ErrorContext(sent, "audit record of a failed mutation could not be written", slog.String("error", aerr.Error()))
		}
		return nil, err
	}
	if m.answersNull {
		if idp == nil {
			return sentBeforeCancel(ctx, c.appliedSync(sent, m, state))
		}
		id = *idp
	}
	if m.taskless != nil {
		if err := m.taskless(id); err != nil {
			_ = c.record(sent, m, AuditFailed, err.Error(), "")
			return nil, err
		}
	}
	ref, err := parseUPID(id)
	if err != nil {
		// Proxmox answered 200: the task most likely started.
		err = acceptedWithoutReceipt(m.path, err)
		_ = c.record(sent, m, AuditFailed, err.Error(), "")
		return nil, err
	}
	if aerr := c.record(sent, m, AuditSubmitted, "", id); aerr != nil {
		// The request went out; we cannot take it back. Say so loudly.
		c.log.ErrorContext(sent, "audit record of a submitted mutation could not be written", slog.String("upid", id), slog.String("error", aerr.Error()))
	}
	r := &Receipt{UPID: id, Task: ref, Action: m.action, Target: m.target, Before: state, HAManaged: state.HAManaged, NewGuest: m.newGuest, op: m.name()}
	if m.changes != nil {
		r.Changes = m.changes()
	}
	if state.HAManaged && (m.action == string(ActionStart) || m.action == string(ActionStop) || m.action == string(ActionShutdown)) {
		r.Note = "the guest is HA-managed: this task only asks the HA manager, which carries the change out afterwards; check the guest's status, not just the task"
	}
	return sentBeforeCancel(ctx, r)
}

// appliedSync is the receipt of a request Proxmox carried out before it
// answered (null, no task): nothing to poll, the record says so.
func (c *Client) appliedSync(ctx context.Context, m *mutation, state GuestState) *Receipt {
	if aerr := c.record(ctx, m, AuditSubmitted, "Proxmox applied the request before answering (no task)", ""); aerr != nil {
		c.log.ErrorContext(ctx, "audit record of a submitted mutation could not be written", slog.String("error", aerr.Error()))
	}
	r := &Receipt{Action: m.action, Target: m.target, Before: state, HAManaged: state.HAManaged, Synchronous: true, op: m.name(),
		Note: "Proxmox applied this request before answering: there is no task (no UPID); read the guest's config to see the result"}
	if m.changes != nil {
		r.Changes = m.changes()
	}
	return r
}

// recheck reads the guest's state again after an approval that may have
// taken time, and re-runs the precondition and the active-task check. It
// refuses when the state differs from the one the approver saw: the
// approval was given for that state, not for whatever the guest is now.
func (c *Client) recheck(ctx context.Context, m *mutation, approved GuestState) (GuestState, error) {
	reads := c.startReads(ctx, m, false)
	defer reads.stop()
	now, err := reads.state.wait()
	if err != nil {
		return approved, &PreconditionReadError{Err: err}
	}
	if !sameForApproval(now, approved) {
		return now, refuse(ErrPrecondition, "%s changed while the approval was pending (approved: %s; now: %s); ask for approval again",
			describe(m.target, now), approved.Summary(), now.Summary())
	}
	if err := m.precondition(ctx, now); err != nil {
		var re *RefusalError
		if !errors.As(err, &re) {
			err = &PreconditionReadError{Err: err}
		}
		return now, err
	}
	if err := noActiveTask(m.target, now, reads.tasks.wait); err != nil {
		return now, err
	}
	if err := reads.recentBackup(c, m); err != nil {
		return now, err
	}
	// The precondition may read more than the state (the disks a destroy
	// loses, a disk's current size, Proxmox's migration precheck): the
	// person approved what they were shown — the effect, the risk, the
	// state, the request, the cluster — not whatever the fresh reads say
	// now. The request is rebuilt as the approvers got it and compared
	// whole, the same binding a grant or an elicitation holds.
	fresh, err := c.approvalRequest(m, now)
	if err != nil {
		return now, err
	}
	if diff := ShownDifference(m.state.shown, fresh); diff != "" {
		return now, refuse(ErrPrecondition, "what approving does changed while the approval was pending: %s; ask for approval again", diff)
	}
	return now, nil
}

// freshState reads the state the mutation's checks rely on: the target
// guest's status/current, or what the mutation's fresh hook reads.
func (c *Client) freshState(ctx context.Context, m *mutation) (GuestState, error) {
	if m.fresh != nil {
		return m.fresh(ctx)
	}
	s, _, err := c.readState(ctx, m.target)
	return s, err
}

func parseUPID(s string) (TaskRef, error) {
	u, err := upid.Parse(s)
	if err != nil {
		return TaskRef{}, refuseUpstream("Proxmox returned a task id that is not a valid UPID")
	}
	return TaskRef{Node: u.Node, Type: u.Type, ID: u.ID, User: u.User, StartTime: u.StartTime, PID: u.PID}, nil
}

func refuseUpstream(msg string) error {
	return &upstreamError{msg: msg}
}

type upstreamError struct{ msg string }

func (e *upstreamError) Error() string { return ErrUpstream.Error() + ": " + e.msg }
func (e *upstreamError) Unwrap() error { return ErrUpstream }
