package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/seal"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// MaxElicitTTL is the longest an elicitation stays answerable.
const MaxElicitTTL = 5 * time.Minute

// elicitInputID is the key of the one input request an approval sends.
const elicitInputID = "approve"

// elicitPurpose binds sealed states to this use and format version.
const elicitPurpose = "proxmox-safe-mcp/elicit/v1"

// firstMRTRVersion is the first protocol version whose clients retry a
// call with input responses themselves. Older clients get the server's
// MRTR middleware, which asks once and re-invokes the handler once.
const firstMRTRVersion = "2026-07-28"

// ElicitOptions configures [NewElicitApprover]. The zero value is fine.
type ElicitOptions struct {
	// Key is the AES-256 key (32 bytes) that seals the request state the
	// client echoes back. Nil means a random key made at start: an
	// elicitation then cannot be answered across a restart. A Key that
	// outlives the process needs Used.
	Key []byte
	// Used records the single-use nonces of answered elicitations until
	// they expire. Nil keeps them in memory, which is right only for a
	// random Key (a restart forgets the key, and with it every state it
	// sealed): with a persistent Key, an elicitation answered before a
	// restart could be answered again after it, so NewElicitApprover
	// refuses a Key without Used. A *grant.Store serves.
	Used NonceRecorder
	// TTL is how long a person has to answer. Zero means [MaxElicitTTL];
	// longer is refused.
	TTL time.Duration
}

// NonceRecorder keeps single-use nonces used until they expire
// ([grant.Store.UseNonce] is one, kept on disk).
type NonceRecorder interface {
	// UseNonce records nonce as used until expires and reports whether it
	// was unused; false means it was used before.
	UseNonce(nonce string, expires time.Time) (bool, error)
}

// ElicitApprover is the "elicit" approval level ([proxmoxsafe.LevelElicit]):
// it asks the person at the MCP client through an MCP elicitation, in the
// multi-round-trip form that works on every protocol version. The first
// call returns a form showing the plan (action, target, current state,
// effect, risk) that asks the person to type the guest's VMID (for a
// request that names no guest, its method and path:
// [proxmoxsafe.ConfirmWord]), with a sealed request state that binds the tool, the digest of the arguments
// ([proxmoxsafe.ApprovalRequest.Arguments], the same one grants bind),
// the target, a fingerprint of the state shown, a single-use nonce and an
// expiry. The retry is approved only when all of those still hold and the
// typed confirmation matches.
//
// A client that did not declare the form elicitation capability is never
// sent a request: the approver reports [proxmoxsafe.ErrApproverUnavailable]
// and the class's next approval level decides (or the call is refused).
//
// An elicitation proves that the client host answered, not that a person
// did: a compromised or agent-driven client can answer it. See
// docs/SECURITY.md.
type ElicitApprover struct {
	sealer *seal.Sealer
	ttl    time.Duration
	now    func() time.Time

	used NonceRecorder
}

// NewElicitApprover returns an approver for the "elicit" level; opts may
// be nil.
func NewElicitApprover(opts *ElicitOptions) (*ElicitApprover, error) {
	var o ElicitOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.TTL == 0:
		o.TTL = MaxElicitTTL
	case o.TTL < 0 || o.TTL > MaxElicitTTL:
		return nil, fmt.Errorf("elicitation TTL %s is out of range (up to %s)", o.TTL, MaxElicitTTL)
	}
	if o.Key != nil && o.Used == nil {
		return nil, errors.New("ElicitOptions.Key needs ElicitOptions.Used: with a key that outlives the process, used nonces must outlive it too, or an answered elicitation could be answered again after a restart")
	}
	s, err := seal.New(o.Key)
	if err != nil {
		return nil, err
	}
	e := &ElicitApprover{sealer: s, ttl: o.TTL, now: time.Now, used: o.Used}
	if e.used == nil {
		e.used = &memoryNonces{used: map[string]time.Time{}, now: func() time.Time { return e.now() }}
	}
	return e, nil
}

// Name implements [proxmoxsafe.Approver]: "elicit".
func (*ElicitApprover) Name() string { return string(proxmoxsafe.LevelElicit) }

// elicitState is what the sealed request state carries.
type elicitState struct {
	Tool   string `json:"tool"`
	Args   string `json:"args"` // proxmoxsafe.ArgumentsDigest of the call
	Action string `json:"action"`
	Target string `json:"target"`
	Params string `json:"params"`
	State  string `json:"state"` // GuestState.Fingerprint of the state shown
	// Cluster is the cluster the person was asked about
	// (proxmoxsafe.Cluster.String), and Bound the binding of everything
	// the form showed (proxmoxsafe.ApprovalRequest.Binding): the answer
	// approves only a retry that, rebuilt from fresh reads, shows the same.
	// The nonce travels in the same sealed state, so it too is good only
	// for this cluster; a used nonce stays used for every cluster.
	Cluster string `json:"cluster"`
	Bound   string `json:"bound"`
	Nonce   string `json:"nonce"`
	Expires int64  `json:"exp"` // Unix seconds
}

// InputRequiredError is what [ElicitApprover] returns on a call it has to
// ask about: the tool handler turns it into an input-required result
// carrying Requests and the sealed State. It matches
// [proxmoxsafe.ErrApprovalRequired], so the pipeline audits it as a
// refusal and sends nothing.
type InputRequiredError struct {
	// Requests is the one elicitation form.
	Requests mcp.InputRequestMap
	// State is the sealed request state the client must echo back.
	State string
	// Reason says why the person is asked (first ask or a re-ask).
	Reason string
}

// Error says that approval is required and nothing was done.
func (e *InputRequiredError) Error() string {
	return "approval required: " + e.Reason + "; no action was taken"
}

// Is makes the error match proxmoxsafe.ErrApprovalRequired.
func (e *InputRequiredError) Is(target error) bool { return target == proxmoxsafe.ErrApprovalRequired }

// Approve implements [proxmoxsafe.Approver].
func (e *ElicitApprover) Approve(ctx context.Context, ar proxmoxsafe.ApprovalRequest) error {
	req := RequestFromContext(ctx)
	if req == nil || req.Params == nil {
		return fmt.Errorf("%w: not an MCP tool call", proxmoxsafe.ErrApproverUnavailable)
	}
	p := req.Params
	if p.RequestState == "" {
		if len(p.InputResponses) > 0 {
			return refuseElicit("input responses arrived on a call that asked for none (unsolicited); they are ignored")
		}
		if !canElicitForm(req.ClientCapabilities()) {
			return fmt.Errorf("%w: the MCP client did not declare the form elicitation capability", proxmoxsafe.ErrApproverUnavailable)
		}
		return e.ask(req, ar, "the person at the MCP client must confirm this in the elicitation form")
	}
	raw, err := e.sealer.Open(elicitPurpose, p.RequestState)
	var st elicitState
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil {
		return refuseElicit("the request state does not unseal (tampered, from another server or from before a restart)")
	}
	now := e.now()
	fresh, err := e.used.UseNonce(st.Nonce, time.Unix(st.Expires, 0))
	if err != nil {
		return refuseElicit("the answer could not be recorded as used (" + err.Error() + ")")
	}
	if !fresh {
		return refuseElicit("this elicitation was already answered (a request state is good for one answer)")
	}
	if now.After(time.Unix(st.Expires, 0)) {
		return refuseElicit("the elicitation expired; call again to be asked again")
	}
	if ar.Arguments == "" || !same(st.Tool, p.Name) || !same(st.Args, ar.Arguments) || !same(st.Action, ar.Action) ||
		!same(st.Target, ar.Target.String()) || !same(st.Params, paramsText(ar.Params)) {
		return refuseElicit("the arguments differ from those the person was asked about")
	}
	if !same(st.Cluster, ar.Cluster.String()) {
		return refuseElicit("the person was asked about another cluster (" + st.Cluster + "), not this server's (" + ar.Cluster.String() + ")")
	}
	resp, _ := p.InputResponses[elicitInputID].(*mcp.ElicitResult)
	if resp == nil || len(p.InputResponses) != 1 {
		return refuseElicit("the retry carries no answer to the elicitation")
	}
	switch resp.Action {
	case "accept":
	case "decline":
		return refuseElicit("the person declined")
	case "cancel":
		return refuseElicit("the person cancelled")
	default:
		return refuseElicit("the elicitation answer has an unknown action")
	}
	if !same(st.State, ar.State.Fingerprint()) {
		if req.ProtocolVersion() >= firstMRTRVersion {
			return e.ask(req, ar, "the guest's state changed since the person was asked; they are asked again with the new state")
		}
		return refuseElicit("the guest's state changed since the person was asked; call again to be asked with the new state")
	}
	// The state alone is not all the form showed: the effect (the disks a
	// destroy deletes, a disk's size), the risk and the request are
	// rebuilt from this call's fresh reads and must be what the person saw.
	if !same(st.Bound, ar.Binding()) {
		if req.ProtocolVersion() >= firstMRTRVersion {
			return e.ask(req, ar, "what approving does changed since the person was asked; they are asked again with what it does now")
		}
		return refuseElicit("what approving does changed since the person was asked (the effect, the risk or the request); call again to be asked with what it does now")
	}
	typed, _ := resp.Content["confirm"].(string)
	if word, what := proxmoxsafe.ConfirmWord(ar.Target, ar.Plan); !proxmoxsafe.ConfirmMatches(typed, word) {
		return refuseElicit("the typed confirmation does not match the " + what)
	}
	return nil
}

// ask builds the form and its sealed state.
func (e *ElicitApprover) ask(req *mcp.CallToolRequest, ar proxmoxsafe.ApprovalRequest, reason string) error {
	if ar.Arguments == "" {
		return refuseElicit("the request carries no arguments digest to bind the answer to")
	}
	word, what := proxmoxsafe.ConfirmWord(ar.Target, ar.Plan)
	if word == "" {
		return refuseElicit("the request names no guest and no request for the person to type")
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("elicitation nonce: %w", err)
	}
	st := elicitState{
		Tool: req.Params.Name, Args: ar.Arguments, Action: ar.Action, Target: ar.Target.String(),
		Params: paramsText(ar.Params), State: ar.State.Fingerprint(), Cluster: ar.Cluster.String(), Bound: ar.Binding(),
		Nonce: hex.EncodeToString(nonce), Expires: e.now().Add(e.ttl).Unix(),
	}
	raw, _ := json.Marshal(st)
	sealed, err := e.sealer.Seal(elicitPurpose, raw)
	if err != nil {
		return fmt.Errorf("elicitation state: %w", err)
	}
	form := &mcp.ElicitParams{
		Mode:    "form",
		Message: planText(ar, e.ttl),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "string",
					"title":       "Type the " + what + " " + word + " to approve",
					"description": "Read the plan above. Type the " + what + " to approve it; decline or cancel to refuse.",
				},
			},
			"required": []string{"confirm"},
		},
	}
	return &InputRequiredError{Requests: mcp.InputRequestMap{elicitInputID: form}, State: sealed, Reason: reason}
}

// planText is the form's message: on which cluster, what will happen, to
// what, from which state, what can go wrong and the request sent: every
// part of what the answer binds (proxmoxsafe.ApprovalRequest.Binding).
// Only validated input and sanitized state.
func planText(ar proxmoxsafe.ApprovalRequest, ttl time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approve a Proxmox change requested through this MCP client?\n")
	if c := ar.Cluster.String(); c != "" {
		fmt.Fprintf(&b, "Cluster: %s\n", c)
	}
	fmt.Fprintf(&b, "Action: %s\n", ar.Action)
	if ps := paramsText(ar.Params); ps != "" {
		fmt.Fprintf(&b, "Parameters: %s\n", ps)
	}
	name := ""
	if ar.State.Name != "" {
		name = " (" + clean(ar.State.Name, 64) + ")"
	}
	if ar.Target.VMID != 0 { // a gateway request may name no guest
		fmt.Fprintf(&b, "Target: %s%s\n", ar.Target.String(), name)
	}
	if ar.State.Status != "" { // nor read its state
		fmt.Fprintf(&b, "Current state: %s\n", stateText(ar.State))
	}
	fmt.Fprintf(&b, "Effect: approving will %s.\n", clean(ar.Effect, 4096))
	risk := ar.Risk
	if risk == "" {
		risk = riskText(ar.Action)
	}
	fmt.Fprintf(&b, "Risk: %s\n", risk)
	if r := ar.Request(); r != "" {
		fmt.Fprintf(&b, "Request: %s\n", clean(r, 1024))
	}
	fmt.Fprintf(&b, "This request expires in %s and can be answered once.", ttl)
	return b.String()
}

// riskText says in one line what can go wrong with an action.
func riskText(action string) string { return proxmoxsafe.ActionRisk(action) }

// refuseElicit is a refusal of the elicit level; it stops the fallback
// chain (the level was available and said no).
func refuseElicit(reason string) error {
	return &proxmoxsafe.RefusalError{Kind: proxmoxsafe.ErrApprovalRequired, Reason: "elicitation: " + reason}
}

// memoryNonces is the NonceRecorder of an approver with a random key.
type memoryNonces struct {
	mu   sync.Mutex
	used map[string]time.Time // nonce → expiry; pruned as they expire
	now  func() time.Time
}

// UseNonce implements [NonceRecorder].
func (m *memoryNonces) UseNonce(nonce string, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for n, exp := range m.used {
		if now.After(exp.Add(time.Minute)) {
			delete(m.used, n)
		}
	}
	if _, ok := m.used[nonce]; ok || nonce == "" {
		return false, nil
	}
	m.used[nonce] = expires
	return true, nil
}

// canElicitForm reports whether the client accepts form elicitations. An
// empty elicitation capability (clients before 2025-11-25) means form.
func canElicitForm(c *mcp.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

func paramsText(ps []proxmoxsafe.ApprovalParam) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name + "=" + p.Value
	}
	return strings.Join(out, " ")
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// inputRequired turns an [InputRequiredError] into the tool's
// input-required result.
func inputRequired(err error) (*mcp.CallToolResult, bool) {
	var ir *InputRequiredError
	if !errors.As(err, &ir) {
		return nil, false
	}
	return &mcp.CallToolResult{InputRequests: ir.Requests, RequestState: ir.State}, true
}
