package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How a tool is served (issue 14, "start like an empty server, add almost
// nothing to each call"). mcp.AddTool resolves both schemas of every tool
// when it is registered and, on every call, marshals the output, decodes it
// again and validates it against the output schema; tools/list then
// marshals every schema object again on every listing. Measured, that was
// most of this server's start-up and much of a small call. So the tools
// are registered with Server.AddTool and:
//
//   - each tool's wire form (schemas marshalled once) is built once per
//     process and operator wait cap, and shared by every server;
//   - the input schema is resolved on the tool's first call, and every call
//     is still validated against it before anything runs, exactly as
//     mcp.AddTool does (same defaults, same error text, which
//     SchemaRefusalMiddleware reads);
//   - the output is marshalled once, for both structuredContent and the
//     text copy, and not validated against the output schema in
//     production: the types are fixed at compile time, and every test of
//     this package runs with validateOutputs on, so each output a test
//     produces is checked against the schema the tool advertises.

// validateOutputs makes every tool call check its structured output
// against the tool's output schema, as mcp.AddTool did. TestMain turns it
// on for this package's tests; it is off in production.
var validateOutputs = false

// servedSchemas is a tool's wire form and its schemas, built once.
type servedSchemas struct {
	tool *mcp.Tool // InputSchema and OutputSchema hold pre-marshalled JSON
	in   func() (*jsonschema.Resolved, error)
	out  func() (*jsonschema.Resolved, error)
}

type servedKey struct {
	name    string
	maxWait time.Duration
}

// servedCache holds the servedSchemas of each (tool, wait cap): the schemas
// depend on nothing else, and are never changed once built.
var servedCache sync.Map // servedKey → *servedSchemas

// served returns d's wire form for a client whose wait cap is maxWait.
func (d toolDef) served(maxWait time.Duration) *servedSchemas {
	key := servedKey{d.info.Name, maxWait}
	if s, ok := servedCache.Load(key); ok {
		return s.(*servedSchemas)
	}
	info := d.build()
	if p := info.InputSchema.Properties["timeout_seconds"]; p != nil {
		setTimeoutCap(p, maxWait)
	}
	t := info.mcpTool()
	t.InputSchema, t.OutputSchema = mustMarshal(info.InputSchema), mustMarshal(info.OutputSchema)
	resolve := func(s *jsonschema.Schema) func() (*jsonschema.Resolved, error) {
		return sync.OnceValues(func() (*jsonschema.Resolved, error) {
			return s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		})
	}
	s := &servedSchemas{tool: t, in: resolve(info.InputSchema), out: resolve(info.OutputSchema)}
	actual, _ := servedCache.LoadOrStore(key, s)
	return actual.(*servedSchemas)
}

func mustMarshal(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: marshalling a schema: %v", err)) // a programmer error
	}
	return b
}

// callFunc is a tool call after its arguments were validated and decoded:
// it returns the result (Content and IsError set) and the structured
// output, or an error that becomes the tool error.
type callFunc[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error)

// addServed registers s on server with call behind the argument checks
// mcp.AddTool makes.
func addServed[In any](server *mcp.Server, s *servedSchemas, call callFunc[In]) {
	server.AddTool(s.tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := decodeArguments[In](req.Params.Arguments, s.in)
		if err != nil {
			var res mcp.CallToolResult
			res.SetError(err)
			return &res, nil
		}
		res, out, err := call(ctx, req, in)
		if err != nil {
			if wireErr, ok := err.(*jsonrpc.Error); ok {
				return nil, wireErr
			}
			var errRes mcp.CallToolResult
			errRes.SetError(err)
			return &errRes, nil
		}
		if out != nil && validateOutputs {
			if err := validateOutput(res.StructuredContent, s.out); err != nil {
				return nil, fmt.Errorf("validating tool output: %w", err)
			}
		}
		return res, nil
	})
}

// decodeArguments validates raw against the input schema (applying its
// defaults) and decodes it, as mcp.AddTool does; its errors read as
// go-sdk's, which SchemaRefusalMiddleware rewrites.
func decodeArguments[In any](raw json.RawMessage, resolved func() (*jsonschema.Resolved, error)) (In, error) {
	var in In
	r, err := resolved()
	if err != nil {
		return in, fmt.Errorf("resolving the input schema: %w", err) // a programmer error: tests build every schema
	}
	args := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	var v any = args
	if err := r.ApplyDefaults(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := r.Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	// The schema allows no property beyond the struct's own (each input
	// schema has additionalProperties: false), so matching names is exact.
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	return in, err
}

// validateOutput checks structured output against the output schema.
func validateOutput(out any, resolved func() (*jsonschema.Resolved, error)) error {
	r, err := resolved()
	if err != nil {
		return err
	}
	raw, ok := out.(json.RawMessage)
	if !ok {
		return fmt.Errorf("structured output is %T, not pre-marshalled JSON", out)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return r.Validate(&v)
}

// structuredResult is a successful (or submitted-then-failed) result:
// out marshalled once, as structuredContent and as the last line of the
// text content after summary (content.go).
func structuredResult(summary string, out any) *mcp.CallToolResult {
	j := compactJSON(out)
	text := summary
	if j != "" {
		if text != "" {
			text += "\n"
		}
		text += j
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if j != "" {
		res.StructuredContent = json.RawMessage(j)
	}
	return res
}
