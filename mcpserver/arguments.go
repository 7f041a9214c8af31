package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
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

// Arguments that repeat a key in one object ({"vmid":100,"vmid":101}) are
// refused as invalid input before anything else looks at them. encoding/json
// and go-sdk keep the last value, other readers the first: a log, a client's
// confirmation dialog or a proxy that reads them the other way would show a
// call other than the one that runs. Keys are compared as JSON decodes
// them, so "vm\u0069d" repeats "vmid". The transports refuse a request
// that repeats a key elsewhere (two "name" members of tools/call's params)
// and leave the arguments to this check, whose refusal is audited.

// repeatedKeyError names the first repeated key, by its path in the
// arguments ("vmid", "params.node", "disks[0].size"). Its message starts
// like go-sdk's argument errors, so SchemaRefusalMiddleware rewrites and
// audits it as it does those.
type repeatedKeyError struct {
	path string
}

func (e *repeatedKeyError) Error() string {
	return fmt.Sprintf("%sthe key %s appears more than once in one object (each key may appear once); no action was taken",
		argumentsPrefix, strconv.Quote(clean(e.path, 64)))
}

// repeatedKeyProblem is the field problem of a repeated key.
const repeatedKeyProblem = "is given more than once in one object: give each key once (JSON readers differ on which value counts)"

// repeatedKey reports the first key repeated in one object of raw, the
// arguments, with its path (internal/jsonrpc.RepeatedKey).
func repeatedKey(raw []byte) (path string, found bool) { return rpcerr.RepeatedKey(raw, false) }
