package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestServedOutputValidatedInTests: production does not validate a tool's
// output against its output schema on every call (served.go), so the
// tests must: with validateOutputs on (TestMain), an output that does not
// match the advertised schema fails the call instead of reaching a client.
func TestServedOutputValidatedInTests(t *testing.T) {
	t.Parallel()
	if !validateOutputs {
		t.Fatal("TestMain must turn validateOutputs on")
	}
	ctx := t.Context()
	in := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	out := &jsonschema.Schema{Type: "object", Required: []string{"n"}, Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
	resolve := func(s *jsonschema.Schema) func() (*jsonschema.Resolved, error) {
		return func() (*jsonschema.Resolved, error) { return s.Resolve(nil) }
	}
	st := &servedSchemas{
		tool: &mcp.Tool{Name: "probe", InputSchema: mustMarshal(in), OutputSchema: mustMarshal(out)},
		in:   resolve(in), out: resolve(out),
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	addServed(s, st, false, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
		o := map[string]any{"n": args["n"]}
		return structuredResult("probe", o), o, nil
	})
	ct, st2 := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// The argument schema here allows nothing; a property is refused
	// before the handler runs, with go-sdk's wording.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"n": 1}})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, argumentsPrefix) {
		t.Fatalf("extra argument: err %v, result %+v", err, res)
	}
	// No argument: the handler's output {"n": null} is not an integer.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "validating tool output") {
		t.Fatalf("output not matching the schema: err %v, want a validation error", err)
	}
}

// TestServedSchemasAreTools: the pre-marshalled schemas served in
// tools/list are exactly those Tools reports, the input schema in its
// listed form (listedInput), the output schema without its descriptions.
func TestServedSchemasAreTools(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, ctx, "", fixtureConfig{})
	listed, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ToolInfo{}
	for _, ti := range Tools(f.client, nil) {
		want[ti.Name] = ti
	}
	if len(listed.Tools) != len(want) {
		t.Fatalf("%d tools listed, Tools has %d", len(listed.Tools), len(want))
	}
	for _, tl := range listed.Tools {
		w := want[tl.Name]
		withoutDescriptions(w.OutputSchema) // served without (withoutDescriptions)
		listedInput(w.InputSchema)
		for _, pair := range [][2]any{{tl.InputSchema, w.InputSchema}, {tl.OutputSchema, w.OutputSchema}} {
			got, w := mustJSON(t, pair[0]), mustJSON(t, pair[1])
			var a, b any
			json.Unmarshal([]byte(got), &a)
			json.Unmarshal([]byte(w), &b)
			if mustJSON(t, a) != mustJSON(t, b) {
				t.Errorf("%s: served schema\n%s\nTools\n%s", tl.Name, got, w)
			}
		}
	}
}

// TestPlaceholderSchema: the input schema New registers each tool with
// (addServed) is an object to go-sdk's check and does not marshal, so
// AddTool skips marshalling and decoding it again to walk its properties.
// Should jsonschema start marshalling it, this fails, rather than every
// start silently paying for that again.
func TestPlaceholderSchema(t *testing.T) {
	t.Parallel()
	if objectSchema.Type != "object" {
		t.Errorf("placeholder type %q: AddTool refuses an input schema that is not an object", objectSchema.Type)
	}
	if b, err := json.Marshal(objectSchema); err == nil {
		t.Errorf("the placeholder marshals (%s): AddTool marshals and decodes it again for every tool", b)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "probe", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
}

// TestServedSchemasHaveNoHeaderAnnotations: no tool's input schema, in
// any profile, has an x-mcp-header annotation, the only thing AddTool's
// walk of an input schema looks for (the placeholder skips that walk;
// a served schema with one would need it).
func TestServedSchemasHaveNoHeaderAnnotations(t *testing.T) {
	t.Parallel()
	for _, d := range toolList() {
		for _, wait := range []time.Duration{proxmoxsafe.DefaultMaxWait, time.Minute} {
			if s := d.served(wait); strings.Contains(string(s.tool.InputSchema.(json.RawMessage)), "x-mcp-header") {
				t.Errorf("%s: the input schema has an x-mcp-header annotation", d.info.Name)
			}
		}
	}
}

// TestStructuredResultTextCarriesTheData: the result is marshalled once,
// as structuredContent (HTML characters unescaped) and, after the summary
// and an empty line, as the text form of the same data; empty lines in a
// summary are dropped, since the first one is where the data begins.
func TestStructuredResultTextCarriesTheData(t *testing.T) {
	t.Parallel()
	type out struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	var nilOut *out
	for _, tc := range []struct {
		name, summary string
		out           any
		text, json    string
	}{
		{"summary and result", "Guest <a> & b", &out{Name: "<a>&b", Tags: []string{}}, "Guest <a> & b\n\nname: <a>&b\ntags: []", `{"name":"<a>&b","tags":[]}`},
		{"summary with empty lines", "one\n\ntwo\n", &out{Name: "x", Tags: []string{"a", "b"}}, "one\ntwo\n\nname: x\ntags[2]: a,b", `{"name":"x","tags":["a","b"]}`},
		{"result only", "", out{Name: "x"}, "name: x\ntags: null", `{"name":"x","tags":null}`},
		{"nil pointer", "nothing", nilOut, "nothing", ""},
		{"nil", "nothing", nil, "nothing", ""},
		{"does not marshal", "bad", map[string]any{"f": func() {}}, "bad", ""},
		{"not an object", "list", []int{1}, "list\n\n[1]", "[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := structuredResult(tc.summary, tc.out)
			if len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != tc.text {
				t.Errorf("text = %q, want %q", r.Content[0].(*mcp.TextContent).Text, tc.text)
			}
			if tc.json == "" {
				if r.StructuredContent != nil {
					t.Errorf("structuredContent = %s, want none", r.StructuredContent)
				}
				return
			}
			raw, ok := r.StructuredContent.(json.RawMessage)
			if !ok || string(raw) != tc.json {
				t.Errorf("structuredContent = %v, want %s", r.StructuredContent, tc.json)
			}
		})
	}
}

// TestListedSchemaRefusesWhatItLeavesOut: the input schema a client is
// listed has no "additionalProperties": false and no bounds (listedInput),
// yet every tool still refuses an unknown parameter, and a value past a
// bound the listed form does not state, before anything reaches Proxmox.
func TestListedSchemaRefusesWhatItLeavesOut(t *testing.T) {
	t.Parallel()
	pol := everyClassPolicy()
	f := newFixture(t, t.Context(), "", fixtureConfig{policy: &pol})
	listed, err := f.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(toolCases) {
		t.Fatalf("%d tools listed, want every tool (%d)", len(listed.Tools), len(toolCases))
	}
	for _, tool := range listed.Tools {
		in := mustJSON(t, tool.InputSchema)
		for _, kw := range []string{`"additionalProperties":false`, `"maxLength"`, `"minLength"`, `"maximum"`, `"minimum"`, `"maxItems"`, `"maxProperties"`} {
			if strings.Contains(in, kw) {
				t.Errorf("%s: the listed input schema has %s: %s", tool.Name, kw, in)
			}
		}
		tc := toolCases[tool.Name]
		args := tc.plan // a mutation's arguments that pass every check up to the approval
		if args == nil {
			args = tc.valid
		}
		f.fake.ResetRequests()
		res := f.call(t, t.Context(), tool.Name, with(args, "zz_unknown", 1))
		wantError(t, res, "invalid input", "zz_unknown", "no action was taken")
		if r := f.fake.Requests(); len(r) != 0 {
			t.Errorf("%s with an unknown parameter: requests reached Proxmox: %v", tool.Name, requestLines(r))
		}
	}
	// A bound the listed schema leaves out (list_guests' limit, at most
	// 1000) is still the server's.
	f.fake.ResetRequests()
	res := f.call(t, t.Context(), ToolListGuests, map[string]any{"limit": 1001})
	wantError(t, res, "invalid input", "limit", "no action was taken")
	if r := f.fake.Requests(); len(r) != 0 {
		t.Errorf("list_guests with limit 1001: requests reached Proxmox: %v", requestLines(r))
	}
}

// TestOutputsCheckedClosed: the tests check outputs against the closed
// form of the served output schema (resolveClosed), so a field the schema
// does not list fails them, at any depth, while a map's keys stay free.
func TestOutputsCheckedClosed(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer"}}},` +
		`"m":{"type":"object","additionalProperties":{"type":"string"}},"l":{"type":"array","items":{"type":"object","properties":{"c":{"type":"integer"}}}}}}`)
	resolved := resolveClosed(schema)
	for _, tc := range []struct {
		out string
		ok  bool
	}{
		{`{"a":{"b":1},"m":{"x":"y"},"l":[{"c":1}]}`, true},
		{`{"z":1}`, false},
		{`{"a":{"b":1,"c":2}}`, false},
		{`{"l":[{"c":1,"d":2}]}`, false},
	} {
		if err := validateOutput(json.RawMessage(tc.out), resolved); (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok %t", tc.out, err, tc.ok)
		}
	}
}
