package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestAnnotations(t *testing.T) {
	t.Parallel()
	type want struct{ readOnly, destructive, idempotent, openWorld bool }
	tests := map[string]want{
		ToolClusterStatus: {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolNodeStatus:    {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolListGuests:    {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolGuestPower:    {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		ToolSnapshotGuest: {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolGuestStatus:   {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolGuestConfig:   {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolSnapshotList:  {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolTaskStatus:    {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolTaskList:      {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		// Infrastructure reads (tools_infra.go).
		ToolStorageList:      {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolBackupList:       {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolCephStatus:       {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolHAStatus:         {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolPermissionsCheck: {readOnly: true, destructive: false, idempotent: true, openWorld: false},
	}
	tools := Tools(nil, nil)
	if len(tools) != len(tests) {
		t.Fatalf("Tools(nil, nil) lists %d tools, the table %d", len(tools), len(tests))
	}
	for _, ti := range tools {
		t.Run(ti.Name, func(t *testing.T) {
			t.Parallel()
			w, ok := tests[ti.Name]
			if !ok {
				t.Fatalf("tool %s has no row in the annotations table", ti.Name)
			}
			a := ti.Annotations
			if a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("DestructiveHint or OpenWorldHint unset (nil means true)")
			}
			got := want{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
			if got != w {
				t.Errorf("annotations = %+v, want %+v", got, w)
			}
			if ti.ReadOnly() != a.ReadOnlyHint {
				t.Errorf("class %q disagrees with readOnlyHint %v", ti.Class, a.ReadOnlyHint)
			}
			if (ti.ApprovalFormat == "") != ti.ReadOnly() {
				t.Errorf("approval format %q for class %q", ti.ApprovalFormat, ti.Class)
			}
			if len(ti.Privileges) == 0 || ti.Title == "" || ti.Description == "" {
				t.Errorf("missing privileges, title or description: %+v", ti)
			}
		})
	}
}

// TestAnnotationLiteralsComplete fails when a ToolAnnotations literal in
// this package leaves a field unset: the zero value of the two bool hints
// cannot be told apart from "unset" at run time.
func TestAnnotationLiteralsComplete(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "ToolAnnotations" {
				return true
			}
			found++
			set := map[string]bool{}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					set[kv.Key.(*ast.Ident).Name] = true
				}
			}
			for _, field := range []string{"ReadOnlyHint", "DestructiveHint", "IdempotentHint", "OpenWorldHint"} {
				if !set[field] {
					t.Errorf("%s: ToolAnnotations literal does not set %s", fset.Position(lit.Pos()), field)
				}
			}
			return true
		})
	}
	if found == 0 {
		t.Fatal("no ToolAnnotations literal found")
	}
}

// goldenTools returns the tools as a client lists them, normalized for a
// golden file: _meta dropped (go-sdk adds protocol-dependent fields).
func goldenTools(t *testing.T, cs *mcp.ClientSession) []byte {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	for _, tool := range res.Tools {
		var m map[string]any
		if err := json.Unmarshal([]byte(mustJSON(t, tool)), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"_meta", "ttlMs", "cacheScope"} {
			delete(m, k)
		}
		tools = append(tools, m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tools); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenToolList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		readOnly bool
	}{
		{file: "tools-default.golden.json"},
		{file: "tools-readonly.golden.json", readOnly: true},
	}
	for _, tt := range tests {
		for i, pv := range protocols {
			t.Run(tt.file+"/"+protoName(pv), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{ReadOnly: tt.readOnly}})
				got := goldenTools(t, f.cs)
				path := filepath.Join("testdata", tt.file)
				if *update {
					if i == 0 {
						if err := os.WriteFile(path, got, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./mcpserver -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("tools/list differs from %s (run go test ./mcpserver -update if intended):\n%s", path, got)
				}
			})
		}
	}
}

// TestSchemaMatchesLibrary keeps the input schemas in sync with the
// library's validators: for each sample, the schema accepts it exactly when
// the library does, except where a rule cannot be expressed in the schema
// (marked libraryOnly: the schema accepts, the library refuses, still
// before any request) and empty optional filters (schemaOnly).
func TestSchemaMatchesLibrary(t *testing.T) {
	t.Parallel()
	// A client whose every request fails at once: the library validates
	// before any I/O, so "invalid input" vs anything else tells its verdict.
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         "https://127.0.0.1:1",
		TokenID:     "test@pve!schema",
		TokenSecret: "x",
		Policy: proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot},
		},
		Audit: newMemAudit(),
	})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, ti := range Tools(nil, nil) {
		rs, err := ti.InputSchema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		schemas[ti.Name] = rs
	}
	libValid := func(tool string, args map[string]any) bool {
		var err error
		raw := []byte(mustJSON(t, args))
		switch tool {
		case ToolNodeStatus:
			var in nodeStatusArgs
			mustUnmarshal(t, raw, &in)
			_, err = client.NodeStatus(t.Context(), in.lib())
		case ToolListGuests:
			var in listGuestsArgs
			mustUnmarshal(t, raw, &in)
			_, err = client.ListGuests(t.Context(), in.lib())
		case ToolGuestPower:
			var in guestPowerArgs
			mustUnmarshal(t, raw, &in)
			_, err = client.GuestPower(t.Context(), in.lib())
		case ToolSnapshotGuest:
			var in snapshotGuestArgs
			mustUnmarshal(t, raw, &in)
			_, err = client.SnapshotGuest(t.Context(), in.lib())
		default:
			t.Fatalf("no library call for %s", tool)
		}
		if err == nil {
			t.Fatalf("%s %v: the library succeeded against an unreachable server", tool, args)
		}
		return !errors.Is(err, proxmoxsafe.ErrInvalidInput)
	}

	power := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"}
	snap := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "s1"}
	snapLXC := maps(snap, "type", "lxc")
	type sample struct {
		tool        string
		args        map[string]any
		libraryOnly bool
		// schemaOnly: the schema refuses, the library would accept.
		schemaOnly bool
	}
	var samples []sample
	add := func(tool string, base map[string]any, field string, values ...any) {
		for _, v := range values {
			samples = append(samples, sample{tool: tool, args: maps(base, field, v)})
		}
	}
	nodes := []any{"pve1", "a", "A9", "node-1", "x-", "-x", "a.b", "../x", "a/b", "", "ä",
		strings.Repeat("n", 63), strings.Repeat("n", 64), "n" + strings.Repeat("-", 61) + "n"}
	vmids := []any{99, 100, 101, 999999999, 1000000000, 0, -1}
	snapnames := []any{"s1", "a", "ab", "A_b-C", "1a", "_a", "a b", "a/b", "a.b", "Current", "currentX",
		strings.Repeat("s", 40), strings.Repeat("s", 41), "pendingx", "é1"}
	add(ToolNodeStatus, map[string]any{"node": "pve1"}, "node", nodes...)
	add(ToolGuestPower, power, "node", nodes...)
	add(ToolGuestPower, power, "vmid", vmids...)
	add(ToolGuestPower, power, "type", "qemu", "lxc", "QEMU", "openvz", "")
	add(ToolGuestPower, power, "action", "start", "shutdown", "reboot", "stop", "reset", "suspend", "Stop", "")
	add(ToolGuestPower, power, "approval", "", "APPROVE stop pve1/qemu/100", strings.Repeat("x", 256), strings.Repeat("x", 257), strings.Repeat("é", 256), strings.Repeat("é", 257))
	add(ToolSnapshotGuest, snap, "snapname", snapnames...)
	add(ToolSnapshotGuest, snapLXC, "snapname", snapnames...)
	add(ToolSnapshotGuest, snap, "vmid", vmids...)
	add(ToolSnapshotGuest, snap, "description", "", "plain text", "line\nbreak", strings.Repeat("d", 1024), strings.Repeat("d", 1025))
	add(ToolSnapshotGuest, snap, "vmstate", true, false)
	add(ToolSnapshotGuest, snapLXC, "vmstate", false)
	add(ToolListGuests, map[string]any{}, "node", nodes[:8]...)
	add(ToolListGuests, map[string]any{}, "type", "qemu", "lxc", "vm")
	add(ToolListGuests, map[string]any{}, "status", "running", "stopped", "unknown", "paused")
	add(ToolListGuests, map[string]any{}, "tag", "prod", "a", "_x", "a+b.c-d", "-x", "+x", "a b", "a;b", strings.Repeat("t", 64), strings.Repeat("t", 65))
	add(ToolListGuests, map[string]any{}, "name", "web", "", "a b~", strings.Repeat("n", 128), strings.Repeat("n", 129), "é", "tab\t")
	add(ToolListGuests, map[string]any{}, "limit", 0, 1, 200, 1000, 1001, -1)
	add(ToolListGuests, map[string]any{}, "cursor", "", strings.Repeat("c", 65), "é")
	// What the schema cannot express.
	samples = append(samples,
		sample{tool: ToolSnapshotGuest, args: maps(snap, "snapname", "pending"), libraryOnly: true},
		sample{tool: ToolSnapshotGuest, args: maps(snap, "snapname", "PENDING"), libraryOnly: true},
		sample{tool: ToolSnapshotGuest, args: maps(snapLXC, "snapname", "vzdump"), libraryOnly: true},
		sample{tool: ToolSnapshotGuest, args: maps(snapLXC, "vmstate", true), libraryOnly: true},
		sample{tool: ToolSnapshotGuest, args: maps(snap, "description", "bidi\u202eoverride"), libraryOnly: true},
		sample{tool: ToolSnapshotGuest, args: maps(snap, "description", "esc\x1b[31m"), libraryOnly: true},
		sample{tool: ToolListGuests, args: map[string]any{"cursor": "garbage"}, libraryOnly: true},
	)
	// Empty filters: the library reads "" as "no filter"; the schema wants
	// them omitted, so a model learns the enum instead of sending "".
	for _, field := range []string{"type", "status", "tag"} {
		samples = append(samples, sample{tool: ToolListGuests, args: map[string]any{field: ""}, schemaOnly: true})
	}
	// The reverse direction: names the schema allows for one type only.
	samples = append(samples,
		sample{tool: ToolSnapshotGuest, args: maps(snapLXC, "snapname", "pending")},
		sample{tool: ToolSnapshotGuest, args: maps(snap, "snapname", "vzdump")},
	)

	for _, s := range samples {
		schemaOK := schemas[s.tool].Validate(jsonValue(t, s.args)) == nil
		libOK := libValid(s.tool, s.args)
		switch {
		case s.libraryOnly:
			if !schemaOK || libOK {
				t.Errorf("%s %v: schema valid %v, library valid %v; want a schema-valid input the library refuses", s.tool, s.args, schemaOK, libOK)
			}
		case s.schemaOnly:
			if schemaOK || !libOK {
				t.Errorf("%s %v: schema valid %v, library valid %v; want an input only the schema refuses", s.tool, s.args, schemaOK, libOK)
			}
		case schemaOK != libOK:
			t.Errorf("%s %v: schema valid %v, library valid %v", s.tool, s.args, schemaOK, libOK)
		}
	}

	// And the exported predicates agree with the property schemas.
	props := toolNamed(t, ToolGuestPower).InputSchema.Properties
	snapProps := toolNamed(t, ToolSnapshotGuest).InputSchema.Properties
	check := func(name string, p *jsonschema.Schema, v any, lib bool) {
		rs, err := p.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := rs.Validate(v) == nil; got != lib {
			t.Errorf("%s %v: schema valid %v, library valid %v", name, v, got, lib)
		}
	}
	for _, n := range nodes {
		check("node", props["node"], n, proxmoxsafe.ValidNode(n.(string)))
	}
	for _, v := range vmids {
		check("vmid", props["vmid"], v, proxmoxsafe.ValidVMID(v.(int)))
	}
	for _, s := range snapnames {
		// The property schema refuses "current" for both types.
		lib := proxmoxsafe.ValidSnapshotName(proxmoxsafe.TypeQEMU, s.(string)) && proxmoxsafe.ValidSnapshotName(proxmoxsafe.TypeLXC, s.(string))
		check("snapname", snapProps["snapname"], s, lib || (strings.EqualFold(s.(string), "pendingx")))
	}
	if !slices.Equal(enumStrings(props["action"]), powerActionStrings()) {
		t.Errorf("action enum %v, library %v", props["action"].Enum, proxmoxsafe.PowerActions())
	}
}

// toolNamed returns the named tool from Tools(nil, nil): the list grows, so
// tests look tools up by name, never by position.
func toolNamed(t testing.TB, name string) ToolInfo {
	t.Helper()
	for _, ti := range Tools(nil, nil) {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("no tool %s", name)
	return ToolInfo{}
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
}

// jsonValue round-trips v through JSON, as the server sees arguments.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	var out any
	mustUnmarshal(t, []byte(mustJSON(t, v)), &out)
	return out
}

func enumStrings(s *jsonschema.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, v.(string))
	}
	return out
}

func powerActionStrings() []string {
	var out []string
	for _, a := range proxmoxsafe.PowerActions() {
		out = append(out, string(a))
	}
	return out
}

func TestToolsReturnsCopies(t *testing.T) {
	t.Parallel()
	a := toolNamed(t, ToolGuestPower)
	a.InputSchema.Properties["vmid"].Minimum = ptr(0.0)
	*a.Annotations.DestructiveHint = false
	a.Privileges[0] = "changed"
	b := toolNamed(t, ToolGuestPower)
	if *b.InputSchema.Properties["vmid"].Minimum != minVMID || !*b.Annotations.DestructiveHint || b.Privileges[0] == "changed" {
		t.Error("Tools shares state between calls")
	}
}
