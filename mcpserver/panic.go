package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a recovered panic tells the caller must be true: a false "nothing
// happened" invites a blind retry, a false "unknown" an anxious check. It
// is decided as for every error result (sentNothing): nothing was done
// when the tool is one of ours and no mutating request of the call had a
// connection to Proxmox, wherever the panic came (in go-sdk's argument
// decoding, in a handler before or after its reads); otherwise the
// outcome is unknown.

// panicErr is the error of a recovered panic in tool.
type panicErr struct {
	tool string
	// nothingSent is true only when it is certain that no mutating request
	// of the call left the process.
	nothingSent bool
}

func (e *panicErr) Error() string {
	if e.nothingSent {
		return fmt.Sprintf("internal error in tool %q (a bug in the server, logged for the operator); "+
			"nothing was sent to Proxmox that could change anything: no action was taken", e.tool)
	}
	return fmt.Sprintf("internal error in tool %q (a bug in the server, logged for the operator); "+
		"the outcome is unknown: check the guest's state and the audit log before retrying", e.tool)
}

// panicError is what a tool handler returns after recovering its own
// panic.
func panicError(ctx context.Context, tool string) error {
	pe := &panicErr{tool: tool, nothingSent: sentNothing(ctx, tool)}
	return &refusal{text: withErrorJSON(ctx, tool, pe.Error(), pe), err: pe}
}

// panicResult is what the client sees after RecoverMiddleware recovered a
// panic in a tools/call.
func panicResult(ctx context.Context, tool string) *mcp.CallToolResult {
	pe := &panicErr{tool: tool, nothingSent: sentNothing(ctx, tool)}
	var r mcp.CallToolResult
	r.Content = []mcp.Content{&mcp.TextContent{Text: withErrorJSON(ctx, tool, pe.Error(), pe)}}
	r.SetError(pe)
	return &r
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
