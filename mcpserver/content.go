package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// What a tool result's text content carries, so that a model that sees
// only the text still sees the data. Many MCP hosts hand the model only content, never
// structuredContent, and clients on protocol 2025-03-26 or older have no
// structuredContent at all; the MCP specification (2025-06-18 and later)
// says a tool that returns structured content SHOULD also return it
// serialized in a text block. Repeating it as JSON would cost every key on
// every row of a list (~255 bytes a guest), so every result's text is:
//
//	a short summary for people (one line; a few more for some tools)
//	(an empty line)
//	every value of the structured result in internal/textform's compact
//	form: key: value lines, nested keys as dotted paths, and each list a
//	header of tab-separated columns with one row per item
//
// The data is exactly structuredContent (TestTextFormEveryTool parses it
// back), so it is bounded by the same limits (paged lists, capped
// strings); a value from Proxmox holding a tab or a line break is quoted
// and cannot add a row or a column.
//
// An error result carries, after its message, one JSON line
// {"error":{...}} with the machine-readable parts: kind, whether anything
// was done, and for an approval refusal the exact phrase, the effect, the
// guest's current state and the plan (the one plan: true returns); the same object is in the result's _meta under
// ErrorMetaKey (servers built with New, or with Middleware installed). It is
// not put in structuredContent: the official
// TypeScript SDK (1.32) validates structuredContent against the tool's
// output schema even when isError is set, and a refusal does not have the
// shape of the tool's result, so such clients would reject the whole answer.

// compactJSON marshals v on one line without HTML escaping (the reader is a
// model or a script, not a browser); "" for nil or what does not marshal.
func compactJSON(v any) string {
	var b bytes.Buffer
	if !appendCompactJSON(&b, v) {
		return ""
	}
	return b.String()
}

// appendCompactJSON appends v to b as compactJSON does (no trailing
// newline) and reports whether anything was appended; on false b is as it
// was.
func appendCompactJSON(b *bytes.Buffer, v any) bool {
	if v == nil {
		return false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return false
	}
	n := b.Len()
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		b.Truncate(n)
		return false
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return true
}

// Kinds of error in the {"error":{"kind":…}} line: one per library
// sentinel, plus internal (a recovered panic) and error (anything else).
const (
	kindInvalidInput     = "invalid_input"
	kindNotAllowed       = "not_allowed"
	kindApprovalRequired = "approval_required"
	kindPrecondition     = "precondition"
	kindAudit            = "audit"
	kindUnauthorized     = "unauthorized"
	kindForbidden        = "forbidden"
	kindNotFound         = "not_found"
	kindTaskFailed       = "task_failed"
	kindUpstream         = "upstream"
	kindInternal         = "internal"
	kindError            = "error"
)

// Values of "action_taken": none when it is certain that nothing was
// changed, unknown when a request may have reached Proxmox (sentNothing
// decides).
const (
	actionNone    = "none"
	actionUnknown = "unknown"
)

// errorKinds maps sentinels to kinds, refusals first: a refusal never
// reached Proxmox.
var errorKinds = []struct {
	err     error
	kind    string
	refusal bool
}{
	{proxmoxsafe.ErrInvalidInput, kindInvalidInput, true},
	{errBadArguments, kindInvalidInput, true},
	{proxmoxsafe.ErrNotAllowed, kindNotAllowed, true},
	{proxmoxsafe.ErrApprovalRequired, kindApprovalRequired, true},
	{proxmoxsafe.ErrPrecondition, kindPrecondition, true},
	{proxmoxsafe.ErrAudit, kindAudit, true},
	{proxmoxsafe.ErrUnauthorized, kindUnauthorized, false},
	{proxmoxsafe.ErrForbidden, kindForbidden, false},
	{proxmoxsafe.ErrNotFound, kindNotFound, false},
	{proxmoxsafe.ErrTaskFailed, kindTaskFailed, false},
	{proxmoxsafe.ErrUpstream, kindUpstream, false},
}

// errorDetail is the machine-readable part of an error result.
type errorDetail struct {
	Kind string `json:"kind"`
	Tool string `json:"tool"`
	// ActionTaken is actionNone or actionUnknown.
	ActionTaken string `json:"action_taken"`
	// Reason is a policy or precondition refusal's reason.
	Reason string `json:"reason,omitempty"`
	// Fields lists invalid input fields.
	Fields []proxmoxsafe.FieldError `json:"fields,omitempty"`
	// HTTPStatus is Proxmox's status code for an upstream error.
	HTTPStatus int `json:"http_status,omitempty"`

	// For approval_required.
	ApprovalPhrase string                  `json:"approval_phrase,omitempty"`
	ApprovalGiven  *bool                   `json:"approval_given,omitempty"`
	Action         string                  `json:"action,omitempty"`
	Target         *proxmoxsafe.Target     `json:"target,omitempty"`
	Effect         string                  `json:"effect,omitempty"`
	CurrentState   *proxmoxsafe.GuestState `json:"current_state,omitempty"`
	// Grant is, on a refusal of the grant level, the pending grant an
	// operator must approve out of band before the call is repeated.
	Grant *grantDetail `json:"grant,omitempty"`
	// Plan is, on an approval refusal, the same plan the tool returns
	// with plan: true for the same input and state, so a caller refused
	// for want of approval learns what it would approve without a second call.
	Plan *proxmoxsafe.Plan `json:"plan,omitempty"`
}

// grantDetail is what a program needs to have a grant approved: its code,
// when it expires (RFC 3339, UTC), the command the operator runs on the
// server host, and the approval page of the grant when one is served.
type grantDetail struct {
	Code        string `json:"code"`
	Expires     string `json:"expires"`
	Command     string `json:"command"`
	ApprovalURL string `json:"approval_url,omitempty"`
}

// withErrorJSON appends the {"error":{...}} line for err, the error of a
// call of tool with ctx, to text.
func withErrorJSON(ctx context.Context, tool, text string, err error) string {
	return text + "\n" + compactJSON(struct {
		Error errorDetail `json:"error"`
	}{describeError(tool, err, sentNothing(ctx, tool))})
}

// sentNothing reports whether it is certain that the call of tool with ctx
// changed nothing: tool is one of this package's tools, and no mutating
// request of the call had a connection to Proxmox (the library's
// SendWatch, which the handler, RecoverMiddleware and
// SchemaRefusalMiddleware put in the context). This, not the kind of the
// error, decides "action_taken": a state read that timed out and a POST
// that timed out end in the same kind of error, and only the POST may have
// been carried out; a refusal that came after a request was sent (one
// snapshot of a cleanup deleted, the next refused) did change something.
// Without a watch, or for a tool that is not ours, nothing is certain.
func sentNothing(ctx context.Context, tool string) bool {
	w := proxmoxsafe.SendWatchFrom(ctx)
	return w != nil && !w.MutatingSent() && isOurTool(tool)
}

// watchSends returns ctx with the call's SendWatch (the one it already
// carries, if any).
func watchSends(ctx context.Context) context.Context {
	ctx, _ = proxmoxsafe.WatchSends(ctx)
	return ctx
}

// describeError builds the machine-readable part of err; nothingSent is
// sentNothing's answer for the call. Only validated input and sanitized,
// capped state go in: never guest names or descriptions, nor what the
// caller supplied as approval.
func describeError(tool string, err error, nothingSent bool) errorDetail {
	d := errorDetail{Kind: kindError, Tool: clean(tool, 128), ActionTaken: actionUnknown}
	if nothingSent {
		d.ActionTaken = actionNone
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			d.Kind = k.kind
			break
		}
	}
	var (
		ae  *proxmoxsafe.ApprovalError
		re  *proxmoxsafe.RefusalError
		ve  *proxmoxsafe.ValidationError
		api *proxmoxsafe.APIError
		pe  *panicErr
	)
	switch {
	case errors.As(err, &ae):
		given := ae.Given
		target := ae.Target
		state := ae.State
		state.Name = "" // free text from the guest: not in an approval prompt
		state.Status, state.QMPStatus = clean(state.Status, 32), clean(state.QMPStatus, 32)
		state.Lock, state.HAState = clean(state.Lock, 32), clean(state.HAState, 32)
		d.ApprovalPhrase, d.ApprovalGiven = ae.Required, &given
		d.Action, d.Target = ae.Action, &target
		d.Effect, d.CurrentState = clean(ae.Effect, 512), &state
	case errors.As(err, &re):
		d.Reason = clean(re.Reason, 512)
	case errors.As(err, &ve):
		for _, f := range ve.Fields {
			d.Fields = append(d.Fields, proxmoxsafe.FieldError{Field: clean(f.Field, 64), Problem: clean(f.Problem, 256)})
		}
	case errors.As(err, &api):
		d.HTTPStatus = api.StatusCode
	case errors.As(err, &pe):
		d.Kind = kindInternal
	}
	if d.Kind == kindApprovalRequired {
		d.Plan = refusalPlan(err)
		d.Grant = refusalGrant(err)
	}
	return d
}

// refusalGrant returns the grant a refusal of the grant level asks the
// operator to approve, or nil.
func refusalGrant(err error) *grantDetail {
	var ge *grant.RequiredError
	if !errors.As(err, &ge) {
		return nil
	}
	command := ge.Command
	if command == "" {
		command = grant.DefaultCommand
	}
	d := &grantDetail{Code: ge.Grant.Code, Expires: ge.Grant.Expires.UTC().Format(time.RFC3339), Command: command + " " + ge.Grant.Code}
	var pr *pageRefusal
	if errors.As(err, &pr) {
		d.ApprovalURL = pr.url
	}
	return d
}

// refusalPlan returns the plan an approval refusal carries, or nil.
func refusalPlan(err error) *proxmoxsafe.Plan {
	var (
		ae *proxmoxsafe.ApprovalError
		ge *grant.RequiredError
		re *proxmoxsafe.RefusalError
	)
	switch {
	case errors.As(err, &ae):
		return ae.Plan
	case errors.As(err, &ge):
		return ge.Plan
	case errors.As(err, &re):
		return re.Plan
	}
	return nil
}

// notFoundHint is the advice for a not-found error, by tool: a task is
// named by its UPID, a guest by node, type and vmid.
func notFoundHint(tool string) string {
	switch tool {
	case ToolTaskStatus:
		return "not found (check the UPID: task_list lists a node's recent tasks, and Proxmox forgets old tasks): "
	case ToolTaskList, ToolNodeStatus:
		return "not found (check the node name with cluster_status): "
	}
	return "not found (check node, type and vmid with list_guests): "
}

// ErrorMetaKey is the `_meta` key under which an error result carries the
// same machine-readable object as its last text line ({"kind": …,
// "action_taken": …, "approval_phrase": …}), for programs that read
// results through an MCP SDK rather than text.
const ErrorMetaKey = "com.github.proxmoxsafe/error"

// errorMetaMiddleware copies the {"error":{…}} line of an error result
// into `_meta` (ErrorMetaKey). It parses the line rather than the Go error
// so every path that writes one (tool errors, schema refusals, recovered
// panics) is covered the same way.
func errorMetaMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		ctr, ok := res.(*mcp.CallToolResult)
		if method != "tools/call" || err != nil || !ok || ctr == nil || !ctr.IsError || len(ctr.Content) == 0 {
			return res, err
		}
		tc, ok := ctr.Content[len(ctr.Content)-1].(*mcp.TextContent)
		if !ok {
			return res, err
		}
		last := tc.Text[strings.LastIndexByte(tc.Text, '\n')+1:]
		var line struct {
			Error map[string]any `json:"error"`
		}
		if !strings.HasPrefix(last, `{"error":`) || json.Unmarshal([]byte(last), &line) != nil || line.Error == nil {
			return res, err
		}
		m := ctr.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m[ErrorMetaKey] = line.Error
		ctr.SetMeta(m)
		return res, err
	}
}

// refusal is a tool error: its text is what the client reads; it wraps the
// library error so middleware can tell refusals from failures.
type refusal struct {
	text string
	err  error
}

func (r *refusal) Error() string { return r.text }
func (r *refusal) Unwrap() error { return r.err }

// maxErrorText caps an error message sent to the client.
const maxErrorText = 2048

// toolError turns a library error of a call of tool with ctx into the
// message the client reads.
func toolError(ctx context.Context, tool string, err error) error {
	var ae *proxmoxsafe.ApprovalError
	if errors.As(err, &ae) {
		return &refusal{text: withErrorJSON(ctx, tool, approvalText(tool, ae), err), err: err}
	}
	text := err.Error()
	if errors.Is(err, proxmoxsafe.ErrNotFound) {
		text = notFoundHint(tool) + text
	}
	// A call that failed before any mutating request left (a failed read,
	// a POST whose connection was refused) changed nothing, but Proxmox's
	// error, or the network's, does not say so; the words say what the
	// error object says (sentNothing).
	if sentNothing(ctx, tool) && !strings.Contains(text, "no action was taken") {
		text += "; no action was taken"
	}
	text, _ = sanitize.Cap(text, maxErrorText)
	return &refusal{text: withErrorJSON(ctx, tool, text, err), err: err} // content.go
}

// approvalText is what a human reading the transcript needs to decide: the
// effect, the guest's current state and the exact phrase. Only validated
// input and sanitized state go in; never guest descriptions or the text the
// caller supplied.
func approvalText(tool string, ae *proxmoxsafe.ApprovalError) string {
	var b strings.Builder
	if ae.Given {
		b.WriteString("Approval required: the approval phrase given does not match; no action was taken.\n")
	} else {
		b.WriteString("Approval required: no approval phrase was given; no action was taken.\n")
	}
	fmt.Fprintf(&b, "Approving will %s.\n", clean(ae.Effect, 512))
	if ae.State.Status != "" { // a gateway write reads no guest state
		fmt.Fprintf(&b, "Current state: %s.\n", stateText(ae.State))
	}
	// The one place every host shows: a model whose host dropped the
	// instructions learns here to ask first (instructionsPhrase).
	fmt.Fprintf(&b, "Show the user this; only if they agree, call %s again with the same arguments and approval set to exactly:\n%s", tool, ae.Required)
	return b.String()
}

// stateText describes a guest's state in a few words.
func stateText(s proxmoxsafe.GuestState) string {
	parts := []string{"status " + orNone(clean(s.Status, 32))}
	if s.QMPStatus != "" && s.QMPStatus != s.Status {
		parts[0] += " (" + clean(s.QMPStatus, 32) + ")"
	}
	parts = append(parts, "lock "+orNone(clean(s.Lock, 32)))
	if s.HAManaged {
		ha := "HA-managed"
		if s.HAState != "" {
			ha += " (HA state " + clean(s.HAState, 32) + ")"
		}
		parts = append(parts, ha)
	} else {
		parts = append(parts, "not HA-managed")
	}
	if s.Template {
		parts = append(parts, "template")
	}
	return strings.Join(parts, ", ")
}
