package grant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
// call repeated. It is bound to the action, the target, the parameters
// that change the effect, the digest of the exact arguments and a
// fingerprint of the guest state shown ([proxmoxsafe.GuestState.Fingerprint]).
// Its JSON form is the grant file's.
type Grant struct {
	// Code names the grant to the operator, e.g. "K7QF-3MZD".
	Code string `json:"code"`
	// Action, Target and Params are what it approves.
	Action string             `json:"action"`
	Target proxmoxsafe.Target `json:"target"`
	Params []string           `json:"params,omitempty"`
	// Arguments is the digest of the call's arguments
	// ([proxmoxsafe.ArgumentsDigest]): only a call with the same arguments
	// matches.
	Arguments string `json:"arguments"`
	// Effect and State are the plan the operator is shown; Plan is the
	// request it would send (nil for operations without a single one).
	Effect string            `json:"effect"`
	State  string            `json:"state"`
	Plan   *proxmoxsafe.Plan `json:"plan,omitempty"`
	// Binding digests action, target, parameters, arguments digest and
	// [proxmoxsafe.GuestState.Fingerprint]; a call matches only with the
	// same digest.
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

// binding digests what a grant approves. Grant files written by earlier
// versions hold this digest, so its encoding must not change.
func binding(req proxmoxsafe.ApprovalRequest) string {
	raw, _ := json.Marshal([]any{req.Action, req.Target.String(), paramStrings(req.Params), req.Arguments, req.State.Fingerprint()})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

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
