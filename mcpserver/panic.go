package mcpserver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a recovered panic tells the caller must be true: a false "nothing
// happened" invites a blind retry, a false "unknown" an anxious check. A
// panic inside one of this package's tool handlers may come after a request
// was sent, so its outcome is unknown. A panic before the handler ran (in
// go-sdk's argument decoding, say) sent nothing, and saying "the outcome is
// unknown" then would send the user to check a guest nobody touched.

// panicErr is the error of a recovered panic in tool.
type panicErr struct {
	tool string
	// handlerRan is false only when it is certain that this package's
	// handler for tool had not started, so nothing was sent.
	handlerRan bool
}

func (e *panicErr) Error() string {
	if !e.handlerRan {
		return fmt.Sprintf("internal error in tool %q before it ran (a bug in the server, logged for the operator); "+
			"nothing was sent to Proxmox: no action was taken", e.tool)
	}
	return fmt.Sprintf("internal error in tool %q (a bug in the server, logged for the operator); "+
		"the outcome is unknown: check the guest's state and the audit log before retrying", e.tool)
}

// panicError is what a tool handler returns after recovering its own
// panic: the handler ran, so the outcome is unknown.
func panicError(tool string) error {
	pe := &panicErr{tool: tool, handlerRan: true}
	return &refusal{text: withErrorJSON(tool, pe.Error(), pe), err: pe}
}

// panicResult is what the client sees after RecoverMiddleware recovered a
// panic in a tools/call. Nothing was sent only when tool is one of ours and
// its handler had not started.
func panicResult(ctx context.Context, tool string) *mcp.CallToolResult {
	ran := true
	if entered, ok := ctx.Value(handlerEnteredKey{}).(*atomic.Bool); ok && isOurTool(tool) {
		ran = entered.Load()
	}
	pe := &panicErr{tool: tool, handlerRan: ran}
	var r mcp.CallToolResult
	r.Content = []mcp.Content{&mcp.TextContent{Text: withErrorJSON(tool, pe.Error(), pe)}}
	r.SetError(pe)
	return &r
}

// handlerEnteredKey carries an *atomic.Bool that RecoverMiddleware puts in
// the context and this package's tool handlers set when they start.
type handlerEnteredKey struct{}

// withHandlerTracking returns ctx with a fresh flag for markHandlerEntered.
func withHandlerTracking(ctx context.Context) context.Context {
	return context.WithValue(ctx, handlerEnteredKey{}, new(atomic.Bool))
}

// markHandlerEntered records that a tool handler started.
func markHandlerEntered(ctx context.Context) {
	if b, ok := ctx.Value(handlerEnteredKey{}).(*atomic.Bool); ok {
		b.Store(true)
	}
}

// isOurTool reports whether name is one of this package's tools.
func isOurTool(name string) bool {
	for _, d := range toolList() {
		if d.info.Name == name {
			return true
		}
	}
	return false
}
