package mcpserver

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		// Responder tools (tools_responder.go).
		ToolVMStart:         {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolVMReboot:        {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		ToolVMReset:         {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		ToolSnapshotCleanup: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		// Admin tools (tools_admin.go): a suspend stops the guest's service.
		ToolGuestSuspend:     {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		ToolGuestResume:      {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolSnapshotRollback: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		ToolSnapshotDelete:   {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		// The gateway (tools_gateway.go): a GET changes nothing; a write
		// can do anything the deny list leaves.
		ToolAPIGet:     {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		ToolAPIRequest: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		// The destroy class (tools_destroy.go).
		ToolGuestDestroy: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		// Provision tools (tools_provision.go): they create, destroy nothing.
		ToolGuestClone:      {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolVMCreate:        {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolContainerCreate: {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		// A migration can stop a container (restart mode) and moves disks.
		ToolGuestMigrate: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
		// The config class (tools_config.go): growing a disk loses nothing;
		// setting keys overwrites or deletes values.
		ToolDiskResize:     {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		ToolGuestConfigSet: {readOnly: false, destructive: true, idempotent: false, openWorld: false},
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
	responder := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
	adminClasses, _ := proxmoxsafe.ProfileAdmin.Classes()
	admin := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: adminClasses,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}} // no elicit/grant approvers here
	// No profile enables gateway-write: its own snapshot, the gateway only.
	gateway := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
	tests := []struct {
		file     string
		readOnly bool
		policy   *proxmoxsafe.Policy
	}{
		{file: "tools-default.golden.json"},
		{file: "tools-readonly.golden.json", readOnly: true},
		{file: "tools-responder.golden.json", policy: &responder},
		{file: "tools-admin.golden.json", policy: &admin},
		{file: "tools-gateway.golden.json", policy: &gateway},
	}
	for _, tt := range tests {
		for i, pv := range protocols {
			t.Run(tt.file+"/"+protoName(pv), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{ReadOnly: tt.readOnly}, policy: tt.policy})
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

func TestToolsReturnsCopies(t *testing.T) {
	t.Parallel()
	a := toolNamed(t, ToolGuestPower)
	a.InputSchema.Properties["vmid"].Minimum = ptr(0.0)
	*a.Annotations.DestructiveHint = false
	a.Privileges[0] = "changed"
	b := toolNamed(t, ToolGuestPower)
	if *b.InputSchema.Properties["vmid"].Minimum != proxmoxsafe.MinVMID || !*b.Annotations.DestructiveHint || b.Privileges[0] == "changed" {
		t.Error("Tools shares state between calls")
	}
}
