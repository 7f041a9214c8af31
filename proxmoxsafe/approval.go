package proxmoxsafe

import (
	"context"
	"crypto/subtle"
	"net/url"
)

// ApprovalParam is one parameter that changes what an approved mutation
// does, beyond its action and target (e.g. vmstate=1: the snapshot also
// saves the VM's memory). Every such parameter is part of the approval
// phrase, so an approval given for one parameter set is refused for another.
type ApprovalParam struct {
	// Name is Proxmox's parameter name, e.g. "vmstate".
	Name string
	// Value is the value as Proxmox receives it, e.g. "1".
	Value string
}

// paramForm is the request form of ps: for a mutation whose approval
// parameters are exactly what it sends, so the two cannot drift apart.
func paramForm(ps []ApprovalParam) url.Values {
	f := url.Values{}
	for _, p := range ps {
		f.Set(p.Name, p.Value)
	}
	return f
}

// ApprovalPhrase returns the exact phrase that approves action on target
// with the given effect-changing parameters, in the order given:
//
//	APPROVE shutdown pve1/qemu/101
//	APPROVE snapshot pve1/qemu/101/before-upgrade
//	APPROVE snapshot pve1/qemu/101/before-upgrade vmstate=1
//
// The phrase is compared byte for byte: no case folding, no trimming. The
// inputs' ApprovalPhrase methods ([GuestPowerInput.ApprovalPhrase],
// [SnapshotGuestInput.ApprovalPhrase]) call it with their parameters.
func ApprovalPhrase(action string, target Target, params ...ApprovalParam) string {
	s := "APPROVE " + action + " " + target.String()
	for _, p := range params {
		s += " " + p.Name + "=" + p.Value
	}
	return s
}

// ApprovalRequest is what an [Approver] decides on. Everything in it was
// validated, checked against policy and read from fresh guest state first.
// An approver that asks a person and uses the answer in a later call binds
// [ApprovalRequest.Binding]: exactly what the person is shown.
type ApprovalRequest struct {
	// Action is the mutation, e.g. "stop" or "snapshot".
	Action string
	// Target is the guest or snapshot acted on.
	Target Target
	// Params are the parameters that change what the mutation does beyond
	// Action and Target (e.g. vmstate=1); empty when there are none. An
	// approver that binds an approval to a request must bind these too.
	Params []ApprovalParam
	// Arguments is the digest of the call's exact arguments
	// ([ArgumentsDigest]): an approver that binds an approval to a request
	// must bind it too, so that an approval given for one argument set is
	// refused for another, even where the difference is not in Params.
	Arguments string
	// Phrase is the exact phrase that approves this request.
	Phrase string
	// Given is the approval text the caller supplied (may be empty).
	Given string
	// State is the guest state read just before asking.
	State GuestState
	// Effect says in one sentence what approving will do.
	Effect string
	// Risk is the action's risk line, as the person approving is shown
	// it (the operation's declaration; [ActionRisk]).
	Risk string
	// Cluster is the cluster the request acts on ([Client.Cluster]): an
	// approver shows it and binds it, so that an approval given for one
	// cluster does not approve the same call on another.
	Cluster Cluster
	// Plan is what the mutation will send, as a call with plan: true
	// returns it ([Plan]); nil for operations that send more than one
	// request ([Client.CleanupSnapshots]: its dry run is the plan). A
	// refusal should carry it, so the caller sees what it is asked to
	// approve ([ApprovalError.Plan]; the grant package's RequiredError.Plan).
	// The pipeline adds it to the refusal types of this package only: an
	// approver that returns its own type must copy it there itself.
	Plan *Plan
}

// An Approver decides whether a mutation may go ahead. Approvers run after
// validation, policy, preconditions and the active-task check, so they can
// never unlock something the policy forbids. An approver may take as long
// as it needs (ask a person, wait for a grant): when it approves, the
// pipeline reads the guest's state again and re-runs the preconditions and
// the active-task check before anything is audited or sent, and refuses if
// the state changed meanwhile. Only the built-in phrase check, which does no
// I/O, is trusted to be instant and skips that second read.
type Approver interface {
	// Name names the approver: in audit records ("approver"), and as the
	// [ApprovalLevel] that [Policy.Approvals] selects it by. It must be
	// stable, short and free of secrets, e.g. "phrase", "elicit", "grant".
	Name() string
	// Approve returns nil to approve. Any other error refuses and is
	// returned to the caller (an error that is neither an *ApprovalError nor
	// matches ErrApprovalRequired is wrapped in a refusal that does), except
	// [ErrApproverUnavailable], which passes the decision to the class's
	// next approval level. ctx is the caller's: adapters put their request
	// in it (mcpserver.RequestFromContext).
	Approve(ctx context.Context, req ApprovalRequest) error
}

// PhraseApprover is the built-in [Approver]: it approves when the supplied
// text equals [ApprovalPhrase] byte for byte. It is a floor, not proof that
// a human agreed: a model can type the phrase too.
type PhraseApprover struct{}

// Name implements [Approver]: "phrase".
func (PhraseApprover) Name() string { return string(LevelPhrase) }

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
		Plan:     req.Plan,
	}
}
