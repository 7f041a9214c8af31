package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// adapter holds what the handlers share.
type adapter struct {
	client     *proxmoxsafe.Client
	readOnly   bool
	log        *slog.Logger
	beforeCall func(tool string)
	// fresh: the server was made by New and is not connected yet
	// (addServed).
	fresh bool
	// approvalPage is Options.ApprovalPageURL (grantpage.go).
	approvalPage string
}

// handlerFunc is the shape of every tool implementation: it returns the
// short text for humans, the typed structured output and an error.
type handlerFunc[In, Out any] func(a *adapter, ctx context.Context, in In) (string, Out, error)

// serveTool registers h for st with what every tool does around its
// library call: panic recovery, marking the handler as entered (a panic
// after that point may have changed something), the beforeCall hook and
// the request in the context (RequestFromContext). finish turns the call's
// outcome into the result; the variants below differ only there.
func serveTool[In, Out any](s *mcp.Server, st *servedSchemas, a *adapter, h handlerFunc[In, Out],
	finish func(name, text string, o Out, err error) (*mcp.CallToolResult, any, error)) {
	name := st.tool.Name
	addServed(s, st, a.fresh, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out any, err error) {
		defer func() {
			if v := recover(); v != nil {
				logPanic(ctx, a.log, "tools/call", name, v)
				res, out, err = nil, nil, panicError(name)
			}
		}()
		markHandlerEntered(ctx)
		if a.beforeCall != nil {
			a.beforeCall(name)
		}
		text, o, err := h(a, withRequest(ctx, req), in)
		perr, err := a.pointToApprovalPage(req, err) // grantpage.go
		if perr != nil {
			return nil, nil, perr
		}
		return finish(name, text, o, err)
	})
}

// typed turns a handlerFunc into a registration: errors become tool
// errors (or an elicitation, elicit.go), results the one text content.
func typed[In, Out any](h handlerFunc[In, Out]) func(*mcp.Server, *servedSchemas, *adapter) {
	return func(s *mcp.Server, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(name, text string, o Out, err error) (*mcp.CallToolResult, any, error) {
			if res, ok := inputRequired(err); ok { // elicit.go
				return res, nil, nil
			}
			if err != nil {
				return nil, nil, toolError(name, err)
			}
			return structuredResult(text, o), o, nil // served.go
		})
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

// toolError turns a library error into the message the client reads.
func toolError(tool string, err error) error {
	var ae *proxmoxsafe.ApprovalError
	if errors.As(err, &ae) {
		return &refusal{text: withErrorJSON(tool, approvalText(tool, ae), err), err: err}
	}
	text := err.Error()
	if errors.Is(err, proxmoxsafe.ErrNotFound) {
		text = notFoundHint(tool) + text
	}
	// A failed read means the pipeline stopped before any mutating request,
	// but Proxmox's error does not say so.
	var apiErr *proxmoxsafe.APIError
	if errors.As(err, &apiErr) && apiErr.Method == http.MethodGet && !strings.Contains(text, "no action was taken") {
		text += "; no action was taken"
	}
	text, _ = sanitize.Cap(text, maxErrorText)
	return &refusal{text: withErrorJSON(tool, text, err), err: err} // content.go
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
	fmt.Fprintf(&b, "To approve, call %s again with the same arguments and approval set to exactly:\n%s", tool, ae.Required)
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
			ha += " (requested state " + clean(s.HAState, 32) + ")"
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// clean makes a value from Proxmox safe for a one-line text, whatever the
// library already did: defense in depth.
func clean(s string, max int) string {
	out, _ := sanitize.CapLine(s, max)
	return out
}

// guestLabel names a guest for humans: "VM 101 (web1) on pve1".
func guestLabel(t proxmoxsafe.Target, name string) string {
	kind := "VM"
	if t.Type == proxmoxsafe.TypeLXC {
		kind = "container"
	}
	l := kind + " " + strconv.Itoa(t.VMID)
	if n := clean(name, 64); n != "" {
		l += " (" + n + ")"
	}
	return l + " on " + t.Node
}

func (a *adapter) clusterStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.ClusterStatusResult, error) {
	res, err := a.client.ClusterStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	online := 0
	for _, n := range res.Nodes {
		if n.Online {
			online++
		}
	}
	var b strings.Builder
	if res.Clustered {
		fmt.Fprintf(&b, "Cluster %s: %d nodes (%d online), ", clean(res.Name, 64), len(res.Nodes), online)
		if res.Quorate {
			b.WriteString("quorate")
		} else {
			b.WriteString("NOT quorate")
		}
	} else {
		name := ""
		if len(res.Nodes) > 0 {
			name = " " + clean(res.Nodes[0].Name, 64)
		}
		fmt.Fprintf(&b, "Standalone node%s", name)
	}
	if res.Version != "" {
		fmt.Fprintf(&b, ", PVE %s", clean(res.Version, 64))
	}
	for _, n := range res.Nodes {
		if n.Problem != "" {
			fmt.Fprintf(&b, "; %s: %s", clean(n.Name, 64), clean(n.Problem, 256))
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintf(&b, "; warning: %s", clean(res.Warnings[0], 512))
	}
	return b.String(), res, nil
}

func (a *adapter) nodeStatus(ctx context.Context, in proxmoxsafe.NodeStatusInput) (string, *proxmoxsafe.NodeStatusResult, error) {
	res, err := a.client.NodeStatus(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := fmt.Sprintf("Node %s: up %s, CPU %.0f%% of %d, load %.2f %.2f %.2f, memory %s of %s, root fs %s of %s",
		res.Node, duration(res.Uptime), res.CPU*100, res.CPUs,
		res.LoadAvg[0], res.LoadAvg[1], res.LoadAvg[2],
		gib(res.Memory.Used), gib(res.Memory.Total), gib(res.RootFS.Used), gib(res.RootFS.Total))
	if res.PVEVersion != "" {
		text += ", " + clean(res.PVEVersion, 64)
	}
	return text, res, nil
}

func duration(sec int64) string {
	d, h, m := sec/86400, sec%86400/3600, sec%3600/60
	switch {
	case d > 0:
		return fmt.Sprintf("%dd %dh", d, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func (a *adapter) listGuests(ctx context.Context, in proxmoxsafe.ListGuestsInput) (string, *proxmoxsafe.ListGuestsResult, error) {
	res, err := a.client.ListGuests(ctx, in)
	if err != nil {
		return "", nil, err
	}
	if a.readOnly {
		// Through this server nothing can be mutated.
		for i := range res.Guests {
			res.Guests[i].Manageable = false
		}
	}
	var text string
	switch {
	case res.Total == 0:
		text = "No guests matched"
	case res.NextCursor != "":
		text = fmt.Sprintf("Listed %d of %d guests; more with cursor %q", len(res.Guests), res.Total, res.NextCursor)
	case len(res.Guests) == 0:
		text = fmt.Sprintf("No more guests: all %d were listed on earlier pages", res.Total)
	default:
		text = fmt.Sprintf("Listed %d of %d guests", len(res.Guests), res.Total)
	}
	return text, res, nil
}

func receiptText(what string, r *proxmoxsafe.Receipt) string {
	text := what + ": task " + clean(r.UPID, 256)
	if r.Synchronous && r.UPID == "" {
		text = what + ": Proxmox applied it before answering (no task)"
	}
	if r.Note != "" {
		text += ". Note: " + clean(r.Note, 512)
	}
	return text
}
