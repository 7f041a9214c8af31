package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nullArgumentsMiddleware treats `"arguments": null` like `{}`, so a
// malformed call is refused and audited rather than crashing. go-sdk decodes null into a nil map and then panics while applying
// the schema defaults of the mutation tools (wait defaults to false); read
// tools have no defaults and already took null as {}. With this, a
// mutation called with null arguments is refused like one called with {}:
// "invalid input … is required", audited, nothing sent.
func nullArgumentsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && ctr.Params != nil &&
			bytes.Equal(bytes.TrimSpace(ctr.Params.Arguments), []byte("null")) {
			ctr.Params.Arguments = json.RawMessage("{}")
		}
		return next(ctx, method, req)
	}
}
