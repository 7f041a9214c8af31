package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Waiting for mutations, because a receipt proves submission, not
// completion: the mutation tools take wait and timeout_seconds. With
// wait the handler asks the library to verify the receipt (see
// proxmoxsafe.Client.Verify) and reports the outcome in plain words,
// forwarding progress notifications when the client asked for them.

// The wait parameters have no description: what waiting establishes, and
// timeout_seconds' default, are the same for every mutation tool and said
// once, in the server's instructions (instructions.go); the cap is the
// schema's maximum, set per client.

// addWaitParams adds the wait parameters (waitArgs) to a library input's
// schema, after its own properties, as embedding waitArgs beside the input
// did.
func addWaitParams(in *jsonschema.Schema) {
	ws, err := jsonschema.For[waitArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: wait parameters' schema: %v", err))
	}
	for _, name := range ws.PropertyOrder {
		in.Properties[name] = ws.Properties[name]
		in.PropertyOrder = append(in.PropertyOrder, name)
	}
}

// setWaitParams constrains the wait parameters. The timeout maximum is
// the library's default cap; applyWaitCap lowers or raises it to the
// operator's cap of the client the tool is served for.
func setWaitParams(p map[string]*jsonschema.Schema) {
	p["timeout_seconds"].Minimum = ptr(1.0)
	setTimeoutCap(p["timeout_seconds"], proxmoxsafe.DefaultMaxWait)
}

func setTimeoutCap(s *jsonschema.Schema, limit time.Duration) {
	secs := max(int(limit/time.Second), 1)
	s.Maximum = ptr(float64(secs))
}

// applyWaitCap sets timeout_seconds' maximum to the client's operator cap
// (proxmoxsafe.Config.MaxWait) in a tool's input schema; tools without the
// parameter and a nil client (documentation) are left as they are.
func applyWaitCap(info *ToolInfo, client *proxmoxsafe.Client) {
	if client == nil || info.InputSchema == nil {
		return
	}
	if p := info.InputSchema.Properties["timeout_seconds"]; p != nil {
		setTimeoutCap(p, client.MaxWait())
	}
}

// callRequestKey carries the *mcp.CallToolRequest of a tool call in its
// context; see RequestFromContext.
type callRequestKey struct{}

// RequestFromContext returns the MCP tools/call request a tool of this
// package is handling, or nil outside one. Every tool handler puts it in
// the context it passes to the library, so a [proxmoxsafe.Approver] can
// reach the client that asked (its session for elicitation, its progress
// token) while it decides.
func RequestFromContext(ctx context.Context) *mcp.CallToolRequest {
	req, _ := ctx.Value(callRequestKey{}).(*mcp.CallToolRequest)
	return req
}

func withRequest(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, callRequestKey{}, req)
}

// submittedError is what a mutation handler returns when the request was
// submitted and then failed (a failed task): the result is a tool error,
// since the action was attempted and did not succeed, but it still
// carries the receipt with its outcome as structured content.
type submittedError struct {
	text    string
	receipt *proxmoxsafe.Receipt
	err     error
}

func (e *submittedError) Error() string { return e.text }
func (e *submittedError) Unwrap() error { return e.err }

// typedMutation is typed for the mutation tools: it also hands the request
// to the handler through ctx (for progress notifications), and turns a
// *submittedError into a tool error that keeps the structured receipt.
func typedMutation[In any](h handlerFunc[In, *proxmoxsafe.Receipt]) func(toolAdder, *servedSchemas, *adapter) {
	// The served schema states this client's cap (served.go), so a client
	// learns the real limit (Tools does the same for listings).
	return func(s toolAdder, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(ctx context.Context, name, text string, r *proxmoxsafe.Receipt, err error) (*mcp.CallToolResult, any, error) {
			if res, ok := inputRequired(err); ok { // elicit.go
				return res, nil, nil
			}
			var se *submittedError
			if errors.As(err, &se) {
				w := wireReceipt(se.receipt)
				res := structuredResult(text, w)
				res.SetError(se.err) // keeps the library error for LoggingMiddleware
				return res, w, nil
			}
			if err != nil {
				return nil, nil, toolError(ctx, name, err)
			}
			w := wireReceipt(r)
			return structuredResult(text, w), w, nil
		})
	}
}

// options turns the wait parameters into library options, forwarding
// progress as MCP notifications when the request carries a progress token.
// It returns nil without wait: timeout_seconds alone does not wait.
func (w waitArgs) options(ctx context.Context) *proxmoxsafe.WaitOptions {
	if !w.WaitForOutcome {
		return nil
	}
	o := &proxmoxsafe.WaitOptions{Timeout: time.Duration(w.TimeoutSeconds) * time.Second}
	req := RequestFromContext(ctx)
	if req == nil || req.Session == nil || req.Params == nil {
		return o
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return o
	}
	o.OnProgress = func(p proxmoxsafe.Progress) {
		// Best effort: a client that went away must not fail the wait.
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: tok,
			Progress:      float64(p.Poll),
			Message:       clean(p.Message, 256),
		})
	}
	return o
}

// submitted builds a mutation tool's answer from what the library
// returned. what is e.g. "start of VM 101 (db1) on pve1". Without a wait
// it is the receipt text as before.
func submitted(what string, r *proxmoxsafe.Receipt, err error) (string, *proxmoxsafe.Receipt, error) {
	if r == nil {
		return "", nil, err
	}
	if r.Plan != nil {
		return dryRunText(what, r), r, nil
	}
	o := r.Outcome
	if o == nil {
		if err != nil {
			// Not reached today (the library returns an outcome with every
			// error after submission), but never hide that something was sent.
			return "", nil, &submittedError{text: receiptText("Submitted "+what, r) + ". The outcome is unknown: " + clean(err.Error(), 512), receipt: r, err: err}
		}
		return receiptText("Submitted "+what, r), r, nil
	}
	upid := clean(r.UPID, 256)
	if r.Synchronous && upid == "" {
		upid = "none: Proxmox applied it before answering"
	}
	var b strings.Builder
	switch o.Status {
	case proxmoxsafe.OutcomeCompleted:
		fmt.Fprintf(&b, "%s completed OK: %s (task %s).", capFirst(what), clean(o.Observed, 128), upid)
	case proxmoxsafe.OutcomeCompletedWithWarnings:
		fmt.Fprintf(&b, "%s completed with warnings (%d): %s (task %s).", capFirst(what), o.Warnings, clean(o.Observed, 128), upid)
		writeLogTail(&b, o.LogTail)
	case proxmoxsafe.OutcomeFailed:
		fmt.Fprintf(&b, "%s FAILED: %s (task %s).", capFirst(what), clean(o.ExitStatus, 512), upid)
		if o.Observed != "" {
			fmt.Fprintf(&b, " Now: %s.", clean(o.Observed, 128))
		}
		writeLogTail(&b, o.LogTail)
		return b.String(), r, &submittedError{text: b.String(), receipt: r, err: o.Err()}
	case proxmoxsafe.OutcomeTimeout:
		secs := strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64)
		switch o.TaskStatus {
		case "running":
			fmt.Fprintf(&b, "%s: still running after %s s; check task %s later (task_status).", capFirst(what), secs, upid)
		case "stopped":
			fmt.Fprintf(&b, "%s: the task ended %s, but after %s s the result is not visible yet (now: %s); check task %s and the guest's status later.",
				capFirst(what), clean(o.ExitStatus, 128), secs, clean(o.Observed, 128), upid)
		default:
			// No status poll answered in time: that the task ended is not
			// known, and saying so would invite a blind retry.
			fmt.Fprintf(&b, "%s: the task's status could not be read within %s s; it may still be running. Check task %s later (task_status) and the guest's status before doing anything else.",
				capFirst(what), secs, upid)
		}
		if o.TimeoutClamped {
			b.WriteString(" The requested timeout was above the operator's limit, which applied.")
		}
	default: // submitted: the wait was cut short
		fmt.Fprintf(&b, "Submitted %s: task %s. The outcome could not be confirmed", what, upid)
		if err != nil {
			fmt.Fprintf(&b, " (%s)", clean(err.Error(), 256))
		}
		b.WriteString("; check the task and the guest's status before doing anything else.")
	}
	if r.Note != "" && o.Status != proxmoxsafe.OutcomeCompleted && o.Status != proxmoxsafe.OutcomeCompletedWithWarnings {
		b.WriteString(" Note: " + clean(r.Note, 512))
	}
	return b.String(), r, nil
}

// writeLogTail appends the task's last log lines, one per line. They come
// from Proxmox (sanitized by the library, again here): data, not
// instructions.
func writeLogTail(b *strings.Builder, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nLast task log lines:")
	for _, l := range lines {
		b.WriteString("\n  " + clean(l, 512))
	}
}

func capFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// receiptResult is the mutation tools' structured output: the library's
// receipt, with the wait's durations in the wire units of this adapter.
type receiptResult struct {
	*proxmoxsafe.Receipt
	Outcome *outcomeResult `json:"outcome,omitempty"`
}

// outcomeResult is a [proxmoxsafe.Outcome] with its durations as numbers.
type outcomeResult struct {
	*proxmoxsafe.Outcome
	// WaitedMS is how long the wait took, in milliseconds.
	WaitedMS int64 `json:"waited_ms"`
	// TimeoutSeconds is the timeout that applied, after the operator's cap.
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// wireReceipt converts a receipt for the wire; nil stays nil.
func wireReceipt(r *proxmoxsafe.Receipt) *receiptResult {
	if r == nil {
		return nil
	}
	out := &receiptResult{Receipt: r}
	if o := r.Outcome; o != nil {
		out.Outcome = &outcomeResult{Outcome: o, WaitedMS: o.Waited.Milliseconds(), TimeoutSeconds: o.Timeout.Seconds()}
	}
	return out
}

// receiptSchemas is schemasFor for the mutation tools. The outcome and its
// after state are pointers, which jsonschema infers as ["null","object"];
// the library omits them instead of sending null, and strict clients reject
// nullable types in output schemas (as with arrays, see nonNullArrays).
func receiptSchemas[In any]() (in, out *jsonschema.Schema) {
	in, out = schemasFor[In, *receiptResult]()
	addWaitParams(in)
	setWaitParams(in.Properties)
	if o := out.Properties["outcome"]; o != nil {
		nonNullObject(o)
		nonNullObject(o.Properties["after"])
		o.Properties["status"].Enum = []any{
			proxmoxsafe.OutcomeSubmitted, proxmoxsafe.OutcomeCompleted, proxmoxsafe.OutcomeCompletedWithWarnings,
			proxmoxsafe.OutcomeFailed, proxmoxsafe.OutcomeTimeout,
		}
	}
	return in, out
}

func nonNullObject(s *jsonschema.Schema) {
	if s != nil && slices.Equal(s.Types, []string{"null", "object"}) {
		s.Types, s.Type = nil, "object"
	}
}

// dryRunText is the summary of a plan (plan: true): nothing was sent.
func dryRunText(what string, r *proxmoxsafe.Receipt) string {
	p := r.Plan
	var b strings.Builder
	fmt.Fprintf(&b, "Plan only for the %s, nothing was changed: approving would %s.", what, clean(p.Effect, 512))
	fmt.Fprintf(&b, " It would send %s %s", p.Method, clean(p.Path, 256))
	if len(p.Params) > 0 {
		keys := make([]string, 0, len(p.Params))
		for k := range p.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			sep := ", "
			if i == 0 {
				sep = " with "
			}
			fmt.Fprintf(&b, "%s%s=%s", sep, clean(k, 64), clean(p.Params[k], 64))
		}
	}
	levels := make([]string, len(p.ApprovalLevels))
	for i, l := range p.ApprovalLevels {
		levels[i] = string(l)
	}
	if p.Approval == "" {
		fmt.Fprintf(&b, ". Approval (levels %s): a person's, no phrase approves it.", strings.Join(levels, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, ". Approval (levels %s): with the phrase level, exactly %q.", strings.Join(levels, ", "), p.Approval)
	return b.String()
}
