package grant

import (
	"crypto/rand"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Status is where a grant is in its life.
type Status string

// The grant statuses.
const (
	// Pending: asked for; waiting for the operator.
	Pending Status = "pending"
	// Approved: the operator approved; the next matching call uses it.
	Approved Status = "approved"
	// Denied: the operator denied it.
	Denied Status = "denied"
	// Used: a call used it; it approves nothing more.
	Used Status = "used"
)

// Grant is one out-of-band approval: asked for by a refused call, decided
// by the operator outside the MCP session, used at most once by the same
// call repeated. It is bound to exactly what the operator is shown
// ([proxmoxsafe.ApprovalRequest.Binding]): the cluster, the action, the
// target, the parameters that change the effect, the digest of the exact
// arguments, the guest's state, the effect, the risk and the request; a
// later call uses it only when the request rebuilt from fresh reads has
// the same binding. Its JSON form is the grant file's.
type Grant struct {
	// Code names the grant to the operator, e.g. "K7QF-3MZD".
	Code string `json:"code"`
	// Cluster is the cluster the call was for, and whom the server acts
	// as there ([proxmoxsafe.Client.Cluster]).
	Cluster proxmoxsafe.Cluster `json:"cluster"`
	// Action, Target and Params are what it approves.
	Action string             `json:"action"`
	Target proxmoxsafe.Target `json:"target"`
	Params []string           `json:"params,omitempty"`
	// Arguments is the digest of the call's arguments
	// ([proxmoxsafe.ArgumentsDigest]): only a call with the same arguments
	// matches.
	Arguments string `json:"arguments"`
	// Effect, Risk, Guest and State are the plan the operator is shown:
	// what approving does, what can go wrong, the guest's state as read
	// (its name included) and that state in words
	// ([proxmoxsafe.GuestState.Summary]); Plan is the request it would
	// send (nil for operations without a single one).
	Effect string                 `json:"effect"`
	Risk   string                 `json:"risk"`
	Guest  proxmoxsafe.GuestState `json:"guest"`
	State  string                 `json:"state"`
	Plan   *proxmoxsafe.Plan      `json:"plan,omitempty"`
	// Binding is [proxmoxsafe.ApprovalRequest.Binding] of the request the
	// operator is shown; a call matches only with the same digest, and
	// only while the grant's own fields still give it (Request).
	Binding string `json:"binding"`
	// Created and Expires bound its life.
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Status, Operator and Decided record the decision and the use.
	Status   Status    `json:"status"`
	Operator string    `json:"operator,omitempty"`
	Decided  time.Time `json:"decided,omitzero"`
	Used     time.Time `json:"used,omitzero"`
}

// codeRE is the code format: 8 characters of Crockford's base32
// (no I, L, O, U), shown as XXXX-XXXX.
var codeRE = lazyre.New(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func newCode() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:]), nil
}

// normalizeCode lets the operator type a code in lower case or with the
// spaces a copy brings along.
func normalizeCode(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}

// binding digests what a grant approves: exactly what the operator is
// shown. Grant files of versions that bound less (no effect, no cluster)
// hold another encoding's digest, which no call matches: such a grant is
// asked for again, never used.
func binding(req proxmoxsafe.ApprovalRequest) string { return req.Binding() }

// Request is the approval request the grant shows the operator, rebuilt
// from its own fields: its [proxmoxsafe.ApprovalRequest.Binding] is the
// grant's Binding exactly when what the grant file shows is what it binds
// (Shows).
func (g Grant) Request() proxmoxsafe.ApprovalRequest {
	var ps []proxmoxsafe.ApprovalParam
	for _, p := range g.Params {
		name, value, _ := strings.Cut(p, "=")
		ps = append(ps, proxmoxsafe.ApprovalParam{Name: name, Value: value})
	}
	return proxmoxsafe.ApprovalRequest{
		Action: g.Action, Target: g.Target, Params: ps, Arguments: g.Arguments,
		State: g.Guest, Effect: g.Effect, Risk: g.Risk, Cluster: g.Cluster, Plan: g.Plan,
	}
}

// Shows reports whether the grant's fields, which the approve command and
// the approval page show, give its Binding: a grant whose file was
// written by a version that bound less, or edited, does not, and
// approves nothing.
func (g Grant) Shows() bool { return g.Binding != "" && binding(g.Request()) == g.Binding }

// paramStrings renders approval parameters as "name=value", as the audit
// record's params do; nil when there are none (the binding digests that
// as null).
func paramStrings(ps []proxmoxsafe.ApprovalParam) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name+"="+p.Value)
	}
	return out
}
