package proxmoxsafe

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// ApprovalLevel names how the mutations of a class are approved: one of the
// built-in levels below, or the [Approver.Name] of an approver given in
// [Config.Approvers]. [Policy.Approvals] sets it per class.
type ApprovalLevel string

// The approval levels this package knows by name.
const (
	// LevelPhrase is the default: the caller passes the exact phrase of
	// [ApprovalPhrase] ([PhraseApprover]). A floor, not proof that a human
	// agreed: a model can type it.
	LevelPhrase ApprovalLevel = "phrase"
	// LevelNone approves without asking. Use it only where a class's own
	// checks (its preconditions and the protection rules) are the safety;
	// every attempt is still audited, with approver "none", and New logs a
	// warning for each class that uses it.
	LevelNone ApprovalLevel = "none"
	// LevelElicit asks the person at the MCP client (MCP elicitation). It
	// needs an approver of that name in [Config.Approvers].
	LevelElicit ApprovalLevel = "elicit"
	// LevelGrant needs an out-of-band, single-use grant from the operator.
	// It needs an approver of that name in [Config.Approvers].
	LevelGrant ApprovalLevel = "grant"
)

// DefaultApprovals returns the approval levels of a class
// [Policy.Approvals] does not name. It is the phrase for every class
// whose effect can be undone or repeated; a class that destroys data
// without a way back defaults to levels only a person can give (no
// phrase), so that leaving the class out of Policy.Approvals never lets a
// model approve it by typing. The slice is new on every call.
func DefaultApprovals(class Class) []ApprovalLevel {
	if humanOnlyClasses[class] {
		return []ApprovalLevel{LevelElicit, LevelGrant}
	}
	return []ApprovalLevel{LevelPhrase}
}

// humanOnlyClasses are the classes whose default approval has no phrase.
// gateway-write sends whatever method, path and parameters a caller
// names, and destroy deletes a guest with its disks: a person approves
// them (elicit, grant), unless the operator chooses the phrase explicitly.
var humanOnlyClasses = map[Class]bool{ClassGatewayWrite: true, ClassDestroy: true}

// ApprovalLevels returns the approval levels the policy gives class, in
// order: Approvals[class] when set, else [DefaultApprovals]. It says
// nothing about whether the class is enabled.
func (p Policy) ApprovalLevels(class Class) []ApprovalLevel {
	if levels, ok := p.Approvals[class]; ok {
		return slices.Clone(levels)
	}
	return DefaultApprovals(class)
}

// levelList names levels for messages: "elicit,grant".
func levelList(levels []ApprovalLevel) string {
	s := make([]string, len(levels))
	for i, l := range levels {
		s[i] = string(l)
	}
	return strings.Join(s, ",")
}

// ErrApproverUnavailable is what an [Approver] returns (possibly wrapped)
// when it cannot serve this request at all, for example an elicitation
// approver whose client cannot elicit. The pipeline then tries the class's
// next approval level; when none is left, the mutation is refused with
// [ErrApprovalRequired]. It is never returned to callers on its own.
const ErrApproverUnavailable Sentinel = "approver unavailable for this request"

// AllOf returns an [Approver] that approves only when every approver does,
// asking them in order and stopping at the first refusal (which it
// returns). Its name is "all(<names>)".
func AllOf(approvers ...Approver) Approver { return allOf(approvers) }

type allOf []Approver

func (a allOf) Name() string { return "all(" + names(a) + ")" }

func (a allOf) Approve(ctx context.Context, req ApprovalRequest) error {
	if len(a) == 0 {
		return &RefusalError{Kind: ErrApprovalRequired, Reason: "an empty AllOf approves nothing"}
	}
	for _, ap := range a {
		if err := ap.Approve(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

// FirstOf returns an [Approver] that asks its approvers in order and lets
// the first one that is available decide: an approver that returns
// [ErrApproverUnavailable] is skipped. When all are unavailable it returns
// ErrApproverUnavailable (wrapped, naming them). Its name is
// "first(<names>)".
func FirstOf(approvers ...Approver) Approver { return firstOf(approvers) }

type firstOf []Approver

func (f firstOf) Name() string { return "first(" + names(f) + ")" }

func (f firstOf) Approve(ctx context.Context, req ApprovalRequest) error {
	var why []string
	for _, ap := range f {
		err := ap.Approve(ctx, req)
		if !errors.Is(err, ErrApproverUnavailable) {
			return err
		}
		why = append(why, ap.Name()+": "+err.Error())
	}
	return &unavailableError{why: why}
}

type unavailableError struct{ why []string }

func (e *unavailableError) Error() string {
	return ErrApproverUnavailable.Error() + " (" + strings.Join(e.why, "; ") + ")"
}
func (e *unavailableError) Unwrap() error { return ErrApproverUnavailable }

func names(as []Approver) string {
	n := make([]string, len(as))
	for i, a := range as {
		n[i] = a.Name()
	}
	return strings.Join(n, ",")
}
