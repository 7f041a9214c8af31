package proxmoxsafe

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// The approval step of the pipeline (pipeline.go): the class's approval
// levels asked in order, and what a refusal carries.

// approve asks the class's approval levels in order; the first approver
// that is available decides. It returns the approver that approved (nil
// for level "none") and records its name in m.
func (c *Client) approve(ctx context.Context, m *mutation, s GuestState) (Approver, error) {
	req, err := c.approvalRequest(m, s)
	if err != nil {
		return nil, err
	}
	approver, err := c.askApprovers(ctx, m, req)
	return approver, c.phraseIgnored(m, withPlan(err, req.Plan))
}

// approvalRequest builds what the approvers are shown for m in state s:
// the same function builds it before the approval and again from the
// fresh reads after it (recheck), so the two can be compared whole.
func (c *Client) approvalRequest(m *mutation, s GuestState) (ApprovalRequest, error) {
	args, err := ArgumentsDigest(m.name(), m.input)
	if err != nil {
		return ApprovalRequest{}, refuse(ErrApprovalRequired, "the arguments could not be digested for the approval (%v)", err)
	}
	req := ApprovalRequest{
		Action:    m.action,
		Target:    m.target,
		Params:    m.params,
		Arguments: args,
		Phrase:    c.onCluster(ApprovalPhrase(m.action, m.target, m.params...)),
		Given:     m.given,
		State:     s,
		Effect:    m.effect(s),
	}
	if m.path != "" { // one request: the plan says which
		req.Plan = m.decorated(c.plan(m, s)).Plan
	}
	return c.shownRequest(m, req), nil
}

// askApprovers asks the class's approval levels in order (see approve).
func (c *Client) askApprovers(ctx context.Context, m *mutation, req ApprovalRequest) (Approver, error) {
	req = c.shownRequest(m, req)
	m.state.shown = req
	var unavailable []string
	for _, level := range c.policy.approvalsFor(m.class()) {
		if level == LevelNone {
			m.state.approvedBy = string(LevelNone)
			return nil, nil
		}
		a := c.approvers[level]
		note := &ApprovalNote{}
		err := a.Approve(withApprovalNote(ctx, note), req) // approval_note.go
		switch {
		case err == nil:
			m.state.approvedBy, m.state.approvalNote = a.Name(), *note
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
	return nil, refuse(ErrApprovalRequired, "no approval level the operator allows for the %q class can serve this request: %s%s", m.class(), strings.Join(unavailable, "; "), c.approvalHint(m))
}

// approvalHint says what the operator can do when no level could serve a
// request of a class left at its human-only default (DefaultApprovals).
func (c *Client) approvalHint(m *mutation) string {
	if _, explicit := c.policy.approvals[m.class()]; explicit || !humanOnlyClasses[m.class()] {
		return ""
	}
	return "; the class destroys without a way back, so by default only a person approves it: use an MCP client that can answer an elicitation, " +
		"or have the operator approve the grant out of band (proxmox-safe-mcp approve CODE), " +
		"or set the class's approval levels explicitly (Policy.Approvals; the binary: PROXMOX_SAFE_APPROVALS, e.g. " + string(m.class()) + "=phrase to accept the typed phrase)"
}

// phraseIgnored prefixes an approval refusal with the reason a phrase the
// caller gave did not count: the class's levels do not include the
// phrase. The refusal itself (a grant code, an elicitation, the levels
// that could not serve) follows unchanged.
func (c *Client) phraseIgnored(m *mutation, err error) error {
	levels := c.policy.approvalsFor(m.class())
	if err == nil || m.given == "" || slices.Contains(levels, LevelPhrase) || !errors.Is(err, ErrApprovalRequired) {
		return err
	}
	return &phraseIgnoredError{msg: "the approval phrase given does not approve the " + strconv.Quote(string(m.class())) + " class, whose levels are " + joinLevels(levels), err: err}
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
