package proxmoxsafe

import (
	"context"
	"crypto/subtle"
)

// ApprovalPhrase returns the exact phrase that approves action on target:
//
//	APPROVE shutdown pve1/qemu/101
//	APPROVE snapshot pve1/qemu/101/before-upgrade
//
// The phrase is compared byte for byte: no case folding, no trimming.
func ApprovalPhrase(action string, target Target) string {
	return "APPROVE " + action + " " + target.String()
}

// ApprovalRequest is what an [Approver] decides on. Everything in it was
// validated, checked against policy and read from fresh guest state first.
type ApprovalRequest struct {
	// Action is the mutation, e.g. "stop" or "snapshot".
	Action string
	// Target is the guest or snapshot acted on.
	Target Target
	// Phrase is the exact phrase that approves this request.
	Phrase string
	// Given is the approval text the caller supplied (may be empty).
	Given string
	// State is the guest state read just before asking.
	State GuestState
	// Effect says in one sentence what approving will do.
	Effect string
}

// An Approver decides whether a mutation may go ahead. It returns nil to
// approve; any error refuses, and the error is returned to the caller.
// Approvers run after validation, policy and preconditions, so they can
// never unlock something the policy forbids.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) error
}

// PhraseApprover is the built-in [Approver]: it approves when the supplied
// text equals [ApprovalPhrase] byte for byte. It is a floor, not proof that
// a human agreed: a model can type the phrase too.
type PhraseApprover struct{}

// Approve implements [Approver].
func (PhraseApprover) Approve(_ context.Context, req ApprovalRequest) error {
	if subtle.ConstantTimeCompare([]byte(req.Given), []byte(req.Phrase)) == 1 {
		return nil
	}
	return &ApprovalError{
		Required: req.Phrase,
		Given:    req.Given != "",
		Action:   req.Action,
		Target:   req.Target,
		State:    req.State,
		Effect:   req.Effect,
	}
}
