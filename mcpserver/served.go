package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/textform"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// How a tool is served: a start should cost about what an empty go-sdk
// server's does, and a call add almost nothing to the library call
// (docs/PERFORMANCE.md). mcp.AddTool resolves both schemas of every tool
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

// checkText, when set (this package's TestMain sets it), checks every
// tool result's text content: that its data parses back to exactly the
// structured result. nil in production.
var checkText func(*mcp.CallToolResult) error

// servedSchemas is a tool's wire form and its schemas, built once.
type servedSchemas struct {
	// tool is the wire form: InputSchema (the listed form, listedInput)
	// and OutputSchema hold pre-marshalled JSON.
	tool *mcp.Tool
	// in is the whole input schema every call is validated against; out
	// is the output schema as validateOutput checks results (resolveClosed).
	in  func() (*jsonschema.Resolved, error)
	out func() (*jsonschema.Resolved, error)
}

type servedKey struct {
	name    string
	maxWait time.Duration
}

// servedCache holds the servedSchemas of each (tool, wait cap): the schemas
// depend on nothing else, and are never changed once built.
var servedCache sync.Map // servedKey → *servedSchemas

// served returns d's wire form for a client whose wait cap is maxWait.
//
// The schemas come from generatedSchemas (schemas_generated.go, written by
// TestGeneratedSchemas from the same inference and checked against it in
// every test run), so a start builds none: inferring and marshalling all
// of them doubles the binary's cold start (measured 2026-12-01 with
// bench/coldstart, 61 interleaved runs: 14.0 ms with the table, 26.4 ms
// without; decoding them from embedded JSON files instead took 8-10 ms
// for all tools in a benchmark, about what inferring them costs). A tool missing from that table (a new tool
// before the file was regenerated) and a tool whose input schema states a
// wait cap other than the default are built here, as before.
func (d toolDef) served(maxWait time.Duration) *servedSchemas {
	key := servedKey{d.info.Name, maxWait}
	if s, ok := servedCache.Load(key); ok {
		return s.(*servedSchemas)
	}
	var in, listed, out json.RawMessage
	if g := generatedFor(d.info.Name); g != nil && !inferSchemas && (!g.waitCap || maxWait == proxmoxsafe.DefaultMaxWait) {
		in, listed, out = g.in, g.listed, g.out
	} else {
		in, listed, out = d.marshalSchemas(maxWait)
	}
	t := d.wireInfo().mcpTool()
	t.InputSchema, t.OutputSchema = listed, out
	if len(out) == 0 {
		// No output schema (an image tool): a nil interface, not a nil
		// RawMessage, which would be sent as "outputSchema": null.
		t.OutputSchema = nil
	}
	s := &servedSchemas{tool: t, in: resolveJSON(in), out: resolveClosed(out)}
	actual, _ := servedCache.LoadOrStore(key, s)
	return actual.(*servedSchemas)
}

// marshalSchemas infers d's schemas, states the wait cap maxWait in the
// input schema (if it has timeout_seconds) and marshals it, its listed
// form (listedInput) and the output schema.
func (d toolDef) marshalSchemas(maxWait time.Duration) (in, listed, out json.RawMessage) {
	info := d.build()
	if p := info.InputSchema.Properties["timeout_seconds"]; p != nil {
		setTimeoutCap(p, maxWait)
	}
	in = mustMarshal(info.InputSchema)
	listedInput(info.InputSchema)
	listed = mustMarshal(info.InputSchema)
	if info.OutputSchema == nil { // an image tool (metrics_chart.go)
		return in, listed, nil
	}
	withoutDescriptions(info.OutputSchema)
	return in, listed, mustMarshal(info.OutputSchema)
}

// The input schema a client is given is not the one every call is checked
// against. Every listing puts the tools' input schemas in the model's
// context, so the listed form keeps what a model needs to form a call
// (types, enums, what is required, each parameter's own description) and
// leaves out, in place:
//
//   - the bounds (lengths, ranges, counts), which only refuse what a model
//     has no reason to send (a 300-character pool name, 5000 cores). The
//     server checks every call against the whole schema, bounds included,
//     before anything runs, and its refusal names the bound;
//   - "additionalProperties": false, for the same reason: an unknown
//     parameter is refused by that check, as before (TestUnknownParameter),
//     so a host validating against the listed form can only let through
//     a call the server then refuses, never refuse one it would run;
//   - the descriptions of the parameters the server's instructions explain
//     (instructionsParams): how to page, and where the approval phrase
//     comes from and when to pass it, are the same in every tool.
//
// [ToolInfo.InputSchema] and docs/TOOLS.md keep the whole schema.
var instructionsParams = []string{"approval", "cursor", "limit"}

func listedInput(s *jsonschema.Schema) {
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
		s.AdditionalProperties = nil // false is {"not": {}}
	}
	for name, p := range s.Properties {
		p.MinLength, p.MaxLength, p.Minimum, p.Maximum = nil, nil, nil, nil
		p.MinItems, p.MaxItems, p.MaxProperties = nil, nil, nil
		if slices.Contains(instructionsParams, name) {
			p.Description = ""
		}
	}
}

// withoutDescriptions removes every description from s, in place, and
// "additionalProperties": false. A served output schema is for the host
// that validates structuredContent with it, and is sent on every listing:
// the tool's description, its input schema and the server's instructions
// say what the fields mean, and [ToolInfo.OutputSchema] keeps the
// descriptions for documentation. Every field the result can carry is
// still listed; only a host's refusal of fields a newer server adds goes.
func withoutDescriptions(s *jsonschema.Schema) {
	eachSchema(s, func(s *jsonschema.Schema) {
		s.Description = ""
		if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil && s.Type == "object" {
			s.AdditionalProperties = nil // false is {"not": {}}
		}
	})
}

// eachSchema calls f on s and then on every schema nested in it
// (properties, definitions, the alternatives, items, additional properties
// and not), as f leaves them; nil schemas are skipped.
func eachSchema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, p := range s.Properties {
		eachSchema(p, f)
	}
	for _, d := range s.Defs {
		eachSchema(d, f)
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, x := range list {
			eachSchema(x, f)
		}
	}
	eachSchema(s.Items, f)
	eachSchema(s.AdditionalProperties, f)
	eachSchema(s.Not, f)
}

// inferSchemas makes served build every schema instead of reading
// generatedSchemas (tests refreshing the golden files turn it on).
var inferSchemas = false

// generatedFor returns the generated schemas of the named tool, or nil.
func generatedFor(name string) *generatedSchema {
	for i := range generatedSchemas {
		if generatedSchemas[i].name == name {
			return &generatedSchemas[i]
		}
	}
	return nil
}

// generatedSchema is one tool's schemas as served with the default wait
// cap (proxmoxsafe.DefaultMaxWait); waitCap says the input schema states
// that cap (it has timeout_seconds).
//
// The schemas are byte slices of literals, which the compiler lays out in
// the binary's data: served hands them to go-sdk as they are, where
// strings had to be copied to the heap, about 100 KB for all tools on
// every start (25 fresh pages, each a page fault) before any client asked.
// They are shared by every server and never written.
type generatedSchema struct {
	name    string
	waitCap bool
	// in is the whole input schema, listed its listed form (listedInput),
	// out the output schema as served.
	in, listed, out json.RawMessage
}

// resolveJSON returns a function that resolves the schema b, once, on
// first use: the schema a tool is validated against is parsed from exactly
// the JSON the client was sent.
func resolveJSON(b json.RawMessage) func() (*jsonschema.Resolved, error) {
	return sync.OnceValues(func() (*jsonschema.Resolved, error) {
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	})
}

// resolveClosed resolves the output schema b, once, on first use, closed:
// every object that lists its properties refuses any other. The served
// schema leaves "additionalProperties": false out (withoutDescriptions),
// so that a host does not refuse a field a newer server adds; the tests
// that validate outputs (validateOutputs) check against the closed form,
// so a result field the schema does not list fails them. A receipt's
// schema lists only the fields its tool declares (returning): this is
// what proves the declarations.
func resolveClosed(b json.RawMessage) func() (*jsonschema.Resolved, error) {
	return sync.OnceValues(func() (*jsonschema.Resolved, error) {
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		closeObjects(&s)
		return s.Resolve(nil)
	})
}

// closeObjects sets "additionalProperties": false on every object schema
// in s that lists properties and says nothing of others.
func closeObjects(s *jsonschema.Schema) {
	eachSchema(s, func(s *jsonschema.Schema) {
		if s.Properties != nil && s.AdditionalProperties == nil {
			s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		}
	})
}

func mustMarshal(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: marshalling a schema: %v", err)) // a programmer error
	}
	return b
}

// objectSchema stands in for a tool's input schema while New registers it
// (see addServed). Server.AddTool checks that a *jsonschema.Schema input
// schema is an object, then marshals the schema, decodes that again and
// walks its properties for x-mcp-header annotations, and skips the walk
// when the schema does not marshal. For a placeholder without properties
// that was a jsonschema marshal and a decode (a 32 KiB buffer) per tool:
// 2.2 million instructions of a start's 13.3 million, and 0.8 MB of its
// 2.6 MB of garbage. So the placeholder is an object that does not marshal
// (it sets both Type and Types, which jsonschema refuses;
// TestPlaceholderSchema). The served schemas carry no x-mcp-header
// annotation (TestServedSchemasHaveNoHeaderAnnotations): the walk had
// nothing to find in them either.
var objectSchema = &jsonschema.Schema{Type: "object", Types: []string{"object"}}

// callFunc is a tool call after its arguments were validated and decoded:
// it returns the result (Content and IsError set) and the structured
// output, or an error that becomes the tool error.
type callFunc[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error)

// addServed registers s on server with call behind the argument checks
// mcp.AddTool makes.
//
// fresh says server was just made by New and is not connected yet. Then
// the tool is registered with a one-line placeholder input schema and no
// output schema, and its real (pre-marshalled) schemas are put into the
// registered Tool right after: Server.AddTool decodes a pre-marshalled
// schema again only to check that it is an object (a few milliseconds for
// all tools, on every start), which the placeholder passes at no cost, and
// go-sdk lists the Tool it keeps. No session can list the tool in between.
// Nothing reads it before the server is connected; TestServedSchemasAreTools
// and the golden files check what tools/list serves. For a server of the
// caller's (AddTools), the Tool is registered as it is.
func addServed[In any](server toolAdder, s *servedSchemas, fresh bool, call callFunc[In]) {
	h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = watchSends(ctx) // content.go: what the error object's action_taken says
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
		if checkText != nil && res != nil {
			if err := checkText(res); err != nil {
				return nil, fmt.Errorf("checking the text content: %w", err)
			}
		}
		return res, nil
	}
	if !fresh {
		server.AddTool(s.tool, h)
		return
	}
	t := *s.tool
	t.InputSchema, t.OutputSchema = objectSchema, nil
	server.AddTool(&t, h)
	t.InputSchema, t.OutputSchema = s.tool.InputSchema, s.tool.OutputSchema
}

// decodeArguments validates raw against the input schema (applying its
// defaults) and decodes it, as mcp.AddTool does; its errors read as
// go-sdk's, which SchemaRefusalMiddleware rewrites.
//
// mcp.AddTool decodes the validated arguments by marshalling them again
// and decoding that. When no default was added, the validated arguments
// are raw itself, so raw is decoded directly (the schema allows no
// property beyond the struct's own, each input schema has
// additionalProperties: false, so names match exactly; input schemas have
// defaults only at the top level, TestInputDefaultsTopLevel). Should the
// direct decode fail where the round trip would not (a whole number
// written as 1.0), the round trip is used.
func decodeArguments[In any](raw json.RawMessage, resolved func() (*jsonschema.Resolved, error)) (In, error) {
	var in In
	r, err := resolved()
	if err != nil {
		return in, fmt.Errorf("resolving the input schema: %w", err) // a programmer error: tests build every schema
	}
	if path, repeated := repeatedKey(raw); repeated { // arguments.go
		return in, &repeatedKeyError{path: path}
	}
	args := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	given := len(args)
	var v any = args
	if err := r.ApplyDefaults(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := r.Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	if m, ok := v.(map[string]any); ok && len(m) == given && len(raw) > 0 {
		if json.Unmarshal(raw, &in) == nil {
			return in, nil
		}
		var zero In
		in = zero
	}
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
// out marshalled once, as structuredContent, and the text content: summary,
// a blank line, then every value of out in the compact text form of
// internal/textform (content.go says why the text carries the data).
func structuredResult(summary string, out any) *mcp.CallToolResult {
	var b bytes.Buffer
	if !appendCompactJSON(&b, out) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}
	}
	js := b.Bytes()
	text := make([]byte, 0, len(summary)+2+len(js)/2)
	text = appendWords(text, summary)
	if len(text) > 0 {
		text = append(text, "\n\n"...)
	}
	n := len(text)
	text, err := textform.Append(text, js, textOptions)
	if err != nil { // out is not an object: no tool has such a result
		text = append(text[:n], js...)
	}
	text = bytes.TrimSuffix(text, []byte("\n"))
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(js),
	}
}

// appendWords appends the words before a text's data without empty lines
// or a trailing line break: the first empty line of a text content is where
// its data begins.
func appendWords(b []byte, words string) []byte {
	words = strings.TrimRight(words, "\n")
	for strings.Contains(words, "\n\n") {
		words = strings.ReplaceAll(words, "\n\n", "\n")
	}
	return append(b, words...)
}

// textOptions say which keys of the results are byte sizes (written in GiB
// or MiB when whole): the names every result uses for a guest's or node's
// memory and disk, never a name some result uses for a count.
var textOptions = textform.Options{ByteKeys: map[string]bool{
	"mem": true, "maxmem": true, "disk": true, "maxdisk": true, "swap": true, "maxswap": true,
}}

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
	// fleet are a fleet's clients, for the tools about all of them
	// (cluster_list.go); nil on a server of one cluster.
	fleet []*proxmoxsafe.Client
}

// handlerFunc is the shape of every tool implementation: it returns the
// short text for humans, the typed structured output and an error.
type handlerFunc[In, Out any] func(a *adapter, ctx context.Context, in In) (string, Out, error)

// serveTool registers h for st with what every tool does around its
// library call: panic recovery, the beforeCall hook and the request in the
// context (RequestFromContext). finish turns the call's outcome into the
// result; the variants below differ only there.
func serveTool[In, Out any](s toolAdder, st *servedSchemas, a *adapter, h handlerFunc[In, Out],
	finish func(ctx context.Context, name, text string, o Out, err error) (*mcp.CallToolResult, any, error)) {
	name := st.tool.Name
	addServed(s, st, a.fresh, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out any, err error) {
		defer func() {
			if v := recover(); v != nil {
				logPanic(ctx, a.log, "tools/call", name, v)
				res, out, err = nil, nil, panicError(ctx, name)
			}
		}()
		if a.beforeCall != nil {
			a.beforeCall(name)
		}
		text, o, err := h(a, withRequest(ctx, req), in)
		perr, err := a.pointToApprovalPage(req, err) // grantpage.go
		if perr != nil {
			return nil, nil, perr
		}
		return finish(ctx, name, text, o, err)
	})
}

// typed turns a handlerFunc into a registration: errors become tool
// errors (or an elicitation, elicit.go), results the one text content.
func typed[In, Out any](h handlerFunc[In, Out]) func(toolAdder, *servedSchemas, *adapter) {
	return func(s toolAdder, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(ctx context.Context, name, text string, o Out, err error) (*mcp.CallToolResult, any, error) {
			if res, ok := inputRequired(err); ok { // elicit.go
				return res, nil, nil
			}
			if err != nil {
				return nil, nil, toolError(ctx, name, err)
			}
			return structuredResult(text, o), o, nil // served.go
		})
	}
}

// typedPartial is typed for tools whose library call can fail after it
// changed something: an error that comes with a result is a tool error
// that still carries the result (what was done) as structured content.
// An approval that asks the person at the client (level elicit) becomes
// the elicitation, as in typed and typedMutation.
func typedPartial[In, Out any](h handlerFunc[In, *Out]) func(toolAdder, *servedSchemas, *adapter) {
	return func(s toolAdder, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(ctx context.Context, name, text string, o *Out, err error) (*mcp.CallToolResult, any, error) {
			if res, ok := inputRequired(err); ok && o == nil { // elicit.go
				return res, nil, nil
			}
			switch {
			case err != nil && o != nil:
				res := structuredResult(text, o) // served.go
				res.SetError(err)                // keeps the library error for LoggingMiddleware
				return res, o, nil
			case err != nil:
				return nil, nil, toolError(ctx, name, err)
			case o == nil:
				return nil, nil, toolError(ctx, name, errors.New("no result"))
			}
			return structuredResult(text, o), o, nil
		})
	}
}

// toolAdder is where a tool is registered: a go-sdk server, or a fleet's
// collector of each cluster's handler (fleet.go).
type toolAdder interface {
	AddTool(t *mcp.Tool, h mcp.ToolHandler)
}
