package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"
)

// mutation is one request travelling through the safety pipeline:
// validate → policy → preconditions → approval → audit → one POST.
// Each step is its own function so the order is visible in run().
type mutation struct {
	op     Operation
	class  Class
	action string
	input  any // the validated input struct
	target Target
	// params change what the mutation does beyond action and target; they
	// are part of the approval phrase (see ApprovalParam).
	params []ApprovalParam
	// given is the caller's approval text.
	given string
	// precondition checks the fresh state and returns a refusal or nil.
	precondition func(ctx context.Context, s GuestState) error
	// effect describes what approving will do, for the approver.
	effect func(s GuestState) string
	// method, path and form are the single request the mutation sends;
	// method "" means POST.
	method string
	path   string
	form   url.Values
	// approvedBy names the approver that approved, for the audit record.
	approvedBy string
	// shownEffect is the effect the approvers were shown; the re-check
	// after a slow approval refuses when the effect is no longer that.
	shownEffect string
	// approvalNote is what the approver added with NoteApproval.
	approvalNote ApprovalNote
	// release ends the claim on the guest (see claim); nil before it.
	release func()
	// holdClaim keeps the claim after run returns, for a wait that follows.
	holdClaim bool
	// planOnly stops before the approval and returns the plan (see Plan).
	planOnly bool
	// apiPath is the API path of a gateway write, for the audit record;
	// "" for every other mutation.
	apiPath string
	// The hooks of mutations that bring a guest into being (provision.go);
	// all nil for the others. prepare runs after the policy step and
	// before the claim, and may complete m from the cluster (the next free
	// VMID). fresh replaces the read of the target's status/current in the
	// fresh-state step and its recheck: a guest to be created has none.
	// newGuest is the guest the mutation creates, kept in receipts and
	// plans for the completion proof.
	prepare  func(ctx context.Context, m *mutation) error
	fresh    func(ctx context.Context) (GuestState, error)
	newGuest *NewGuest
	// alsoNodes are other nodes the mutation touches (a migration's
	// or a clone's target); the policy step requires each on the allowlist too.
	alsoNodes []string
	// decorate, when set, adds the mutation's own details to the plan or
	// the receipt (a migration's target node, precheck and HA note).
	decorate func(r *Receipt)
	// checkInput, when set, checks what the validate tags cannot (e.g.
	// config values against the schema) right after them: still before
	// any I/O. allow, when set, is the operation's own policy check after
	// the class's (e.g. the config key allowlist).
	checkInput func() error
	allow      func(p *policy) error
	// planForm, when set, is what a plan shows instead of form (free
	// text bound by digest).
	planForm url.Values
	// answersNull marks an endpoint that may apply the change and answer
	// null instead of a task id (PUT …/config): the receipt then says it
	// was applied synchronously, with no UPID.
	answersNull bool
	// changes are the config changes the receipt carries ([Receipt.Changes]).
	changes func() []ConfigChange
}

func (c *Client) run(ctx context.Context, m *mutation) (*Receipt, error) {
	start := time.Now()
	rec, err := c.runSteps(ctx, m)
	if m.release != nil && (err != nil || !m.holdClaim) {
		m.release()
	}
	attrs := []slog.Attr{
		slog.String("action", m.action),
		slog.String("node", m.target.Node),
		slog.Int("vmid", m.target.VMID),
	}
	if rec != nil {
		attrs = append(attrs, slog.String("upid", rec.UPID))
	}
	return rec, c.logged(ctx, m.op, start, err, attrs...)
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
		c.auditRefusal(ctx, &mutation{op: m.op}, err)
		return GuestState{}, err
	}
	if m.checkInput != nil {
		if err := m.checkInput(); err != nil {
			c.auditRefusal(ctx, &mutation{op: m.op}, err)
			return GuestState{}, err
		}
	}
	if err := c.policy.checkMutation(m.class, m.target); err != nil {
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
	state, err := c.freshState(ctx, m)
	if err != nil {
		err = &PreconditionReadError{Err: err}
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	// A guest still to be created has no name, tags or pool yet; the
	// provision precondition checks the pool it will join.
	if m.fresh == nil {
		if err := c.checkProtected(ctx, m.target, state); err != nil {
			c.auditRefusal(ctx, m, err)
			return GuestState{}, err
		}
	}
	if err := m.precondition(ctx, state); err != nil {
		var re *RefusalError
		if !errors.As(err, &re) {
			err = &PreconditionReadError{Err: err}
		}
		c.auditRefusal(ctx, m, err)
		return GuestState{}, err
	}
	if err := c.checkNoActiveTask(ctx, m.target, state); err != nil {
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
	method := m.method
	if method == "" {
		method = http.MethodPost
	}
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
	r := &Receipt{UPID: id, Task: ref, Action: m.action, Target: m.target, Before: state, HAManaged: state.HAManaged, NewGuest: m.newGuest, op: m.op}
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
	r := &Receipt{Action: m.action, Target: m.target, Before: state, HAManaged: state.HAManaged, Synchronous: true, op: m.op,
		Note: "Proxmox applied this request before answering: there is no task (no UPID); read the guest's config to see the result"}
	if m.changes != nil {
		r.Changes = m.changes()
	}
	return r
}

// approve asks the class's approval levels in order; the first approver
// that is available decides. It returns the approver that approved (nil
// for level "none") and records its name in m.
func (c *Client) approve(ctx context.Context, m *mutation, s GuestState) (Approver, error) {
	args, err := ArgumentsDigest(m.op, m.input)
	if err != nil {
		return nil, refuse(ErrApprovalRequired, "the arguments could not be digested for the approval (%v)", err)
	}
	req := ApprovalRequest{
		Action:    m.action,
		Target:    m.target,
		Params:    m.params,
		Arguments: args,
		Phrase:    ApprovalPhrase(m.action, m.target, m.params...),
		Given:     m.given,
		State:     s,
		Effect:    m.effect(s),
	}
	m.shownEffect = req.Effect
	if m.path != "" { // one request: the plan says which
		req.Plan = m.decorated(c.plan(m, s)).Plan
	}
	approver, err := c.askApprovers(ctx, m, req)
	return approver, c.phraseIgnored(m, withPlan(err, req.Plan))
}

// askApprovers asks the class's approval levels in order (see approve).
func (c *Client) askApprovers(ctx context.Context, m *mutation, req ApprovalRequest) (Approver, error) {
	var unavailable []string
	for _, level := range c.policy.approvalsFor(m.class) {
		if level == LevelNone {
			m.approvedBy = string(LevelNone)
			return nil, nil
		}
		a := c.approvers[level]
		note := &ApprovalNote{}
		err := a.Approve(withApprovalNote(ctx, note), req) // approval_note.go
		switch {
		case err == nil:
			m.approvedBy, m.approvalNote = a.Name(), *note
			return a, nil
		case errors.Is(err, ErrApproverUnavailable):
			unavailable = append(unavailable, string(level)+" ("+err.Error()+")")
			continue
		}
		var ae *ApprovalError
		if errors.As(err, &ae) || errors.Is(err, ErrApprovalRequired) {
			return nil, err
		}
		// An approver's own error still means "not approved".
		return nil, &RefusalError{Kind: ErrApprovalRequired, Reason: err.Error()}
	}
	return nil, refuse(ErrApprovalRequired, "no approval level the operator allows for the %q class can serve this request: %s%s", m.class, strings.Join(unavailable, "; "), c.approvalHint(m))
}

// approvalHint says what the operator can do when no level could serve a
// request of a class left at its human-only default (DefaultApprovals).
func (c *Client) approvalHint(m *mutation) string {
	if _, explicit := c.policy.approvals[m.class]; explicit || !humanOnlyClasses[m.class] {
		return ""
	}
	return "; the class destroys without a way back, so by default only a person approves it: use an MCP client that can answer an elicitation, " +
		"or have the operator approve the grant out of band (proxmox-safe-mcp approve CODE), " +
		"or set the class's approval levels explicitly (Policy.Approvals; the binary: PROXMOX_SAFE_APPROVALS, e.g. " + string(m.class) + "=phrase to accept the typed phrase)"
}

// phraseIgnored prefixes an approval refusal with the reason a phrase the
// caller gave did not count: the class's levels do not include the
// phrase. The refusal itself (a grant code, an elicitation, the levels
// that could not serve) follows unchanged.
func (c *Client) phraseIgnored(m *mutation, err error) error {
	levels := c.policy.approvalsFor(m.class)
	if err == nil || m.given == "" || slices.Contains(levels, LevelPhrase) || !errors.Is(err, ErrApprovalRequired) {
		return err
	}
	return &phraseIgnoredError{msg: "the approval phrase given does not approve the " + strconv.Quote(string(m.class)) + " class, whose levels are " + joinLevels(levels), err: err}
}

type phraseIgnoredError struct {
	msg string
	err error
}

func (e *phraseIgnoredError) Error() string { return e.msg + "; " + e.err.Error() }
func (e *phraseIgnoredError) Unwrap() error { return e.err }

// joinLevels renders levels as "elicit, grant".
func joinLevels(levels []ApprovalLevel) string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = string(l)
	}
	return strings.Join(out, ", ")
}

// withPlan returns an approval refusal of this package's types carrying
// plan, so the caller sees what it is asked to approve: the same plan a
// call with plan: true returns. The error is copied, never changed in
// place: an approver may return a shared value. Errors of other types
// pass as they are: an approver with its own refusal type (the grant
// store's) carries ApprovalRequest.Plan itself.
func withPlan(err error, plan *Plan) error {
	if plan == nil {
		return err
	}
	switch e := err.(type) {
	case *ApprovalError:
		if e.Plan == nil {
			cp := *e
			cp.Plan = plan
			return &cp
		}
	case *RefusalError:
		if e.Plan == nil && e.Kind == ErrApprovalRequired {
			cp := *e
			cp.Plan = plan
			return &cp
		}
	}
	return err
}

// recheck reads the guest's state again after an approval that may have
// taken time, and re-runs the precondition and the active-task check. It
// refuses when the state differs from the one the approver saw: the
// approval was given for that state, not for whatever the guest is now.
func (c *Client) recheck(ctx context.Context, m *mutation, approved GuestState) (GuestState, error) {
	now, err := c.freshState(ctx, m)
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
	if err := c.checkNoActiveTask(ctx, m.target, now); err != nil {
		return now, err
	}
	// The precondition may read more than the state (the disks a destroy
	// loses, Proxmox's migration precheck): the person approved the effect
	// they were shown, not whatever the fresh reads say now.
	if effect := m.effect(now); effect != m.shownEffect {
		return now, refuse(ErrPrecondition, "what approving does changed while the approval was pending (approved: %q; now: %q); ask for approval again",
			m.shownEffect, effect)
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

// RecordRefusal writes a "refused" audit record for a mutation request that
// an adapter refused before it reached this package (for example, arguments
// that failed an MCP input schema). op names the operation
// ([OpGuestPower], [OpSnapshotGuest]); reason should not quote the refused input. It does
// nothing when no audit sink is configured.
func (c *Client) RecordRefusal(ctx context.Context, op Operation, reason error) {
	c.auditRefusal(ctx, &mutation{op: op}, reason)
}

func (c *Client) auditRefusal(ctx context.Context, m *mutation, reason error) {
	if c.audit == nil {
		return
	}
	if err := c.record(ctx, m, AuditRefused, reason.Error(), ""); err != nil {
		c.log.ErrorContext(ctx, "audit record of a refusal could not be written", slog.String("error", err.Error()))
	}
}

func (c *Client) record(ctx context.Context, m *mutation, ev AuditEvent, reason, id string) error {
	if c.audit == nil {
		return errors.New("no audit sink configured")
	}
	rec := AuditRecord{
		Time:     time.Now().UTC(),
		Event:    ev,
		Op:       m.op,
		Action:   m.action,
		Node:     m.target.Node,
		Type:     string(m.target.Type),
		VMID:     m.target.VMID,
		Snapshot: m.target.Snapshot,
		Params:   paramStrings(m.params),
		Reason:   reason,
		Path:     m.apiPath,
		UPID:     id,
	}
	if m.apiPath != "" {
		rec.Method = m.method
	}
	if ev == AuditApproved || ev == AuditSubmitted {
		rec.Approver = m.approvedBy
		rec.Grant, rec.Operator = m.approvalNote.Grant, m.approvalNote.Operator
	}
	return c.audit.Record(ctx, rec)
}

// paramStrings renders approval parameters as "name=value".
func paramStrings(ps []ApprovalParam) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name+"="+p.Value)
	}
	return out
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
