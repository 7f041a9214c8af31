package proxmoxsafe

import (
	"strconv"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
)

// Controls are the parts every mutation input shares: the approval text,
// the plan-only switch and the wait. Embedded, they keep the input's JSON
// flat ("approval", "plan"); Wait is never part of it.
type Controls struct {
	// Approval is the approval text where the operator's level for the
	// class is the phrase: exactly the phrase the refusal or the plan
	// names ([ApprovalPhrase]; each operation's shape is its
	// [OperationInfo.ApprovalFormat]). At most [MaxApprovalLen]
	// characters, or the input's longer limit ([MaxApprovalLenOf]).
	Approval string `json:"approval,omitempty" jsonschema:"The approval phrase, exactly as the refusal or the plan names it. Omit it on the first call."`
	// Plan, when true, runs every step up to the approval and returns
	// the plan ([Receipt.Plan]) without sending any mutating request.
	// Plan has no description in a tool's schema: the server's
	// instructions say what every tool's plan does.
	Plan bool `json:"plan,omitempty"`
	// Wait, when set, makes the call wait for the task and verify its
	// effect from fresh state before returning; see [Client.Verify]. nil
	// returns the receipt at submission.
	Wait *WaitOptions `json:"-"`
}

// MutationControls returns the controls themselves, for code that sets
// them on any mutation input (an adapter's wait): every input that embeds
// Controls has this method.
func (c *Controls) MutationControls() *Controls { return c }

// approvalLimiter is an input whose approval may be longer than
// [MaxApprovalLen]: its phrase names every parameter.
type approvalLimiter interface{ approvalLimit() int }

// MaxApprovalLenOf returns how long input's approval text may be, in
// characters: [MaxApprovalLen], or more for the inputs whose phrases name
// every parameter ([MaxProvisionApprovalLen], [MaxConfigApprovalLen]). An
// adapter's schema states it as the approval's maxLength.
func MaxApprovalLenOf(input any) int {
	if l, ok := input.(approvalLimiter); ok {
		return l.approvalLimit()
	}
	return MaxApprovalLen
}

// validateControls checks the approval's length against the input's
// limit, as a max tag would (the problem and the rule are the tag's): one
// Controls type serves inputs whose phrases differ in length.
func validateControls(sl validator.StructLevel) {
	limit := MaxApprovalLenOf(sl.Top().Interface())
	if a := sl.Current().Interface().(Controls).Approval; utf8.RuneCountInString(a) > limit {
		sl.ReportError(a, "approval", "Approval", "max", strconv.Itoa(limit))
	}
}
