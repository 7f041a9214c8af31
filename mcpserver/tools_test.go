package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// goldenTools returns the tools as a client lists them, in listing order,
// each normalized for a golden file: _meta dropped (go-sdk adds
// protocol-dependent fields), keys sorted, indented.
func goldenTools(t *testing.T, cs *mcp.ClientSession) (names []string, defs map[string][]byte) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defs = map[string][]byte{}
	for _, tool := range res.Tools {
		var m map[string]any
		if err := json.Unmarshal([]byte(mustJSON(t, tool)), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"_meta", "ttlMs", "cacheScope"} {
			delete(m, k)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		defs[tool.Name] = buf.Bytes()
	}
	return names, defs
}

// goldenProfiles are the configurations whose tool lists are golden: each
// profile's list is testdata/profiles/<name>.txt (tool names, one a line,
// in listing order), and every tool it lists must be served exactly as
// testdata/tools/<tool>.json holds it. A tool's definition depends on
// nothing a profile chooses but the operator's wait cap (applyWaitCap);
// maxWait profiles check that it is the only difference.
func goldenProfiles() []goldenProfile {
	responder := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
	adminClasses, _ := proxmoxsafe.ProfileAdmin.Classes()
	admin := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: adminClasses,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}} // no elicit/grant approvers here
	// No profile enables gateway-write: its own list, the gateway only.
	gateway := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
	return []goldenProfile{
		{name: "default"},
		{name: "readonly", readOnly: true},
		{name: "responder", policy: &responder},
		{name: "admin", policy: &admin},
		{name: "gateway", policy: &gateway},
		// The admin tools again under an operator wait cap of 45 s: the
		// same list, and each definition the golden one but for
		// timeout_seconds' maximum and description.
		{name: "admin", policy: &admin, maxWait: 45 * time.Second},
	}
}

type goldenProfile struct {
	name     string
	readOnly bool
	policy   *proxmoxsafe.Policy
	maxWait  time.Duration // 0: the default cap
}

// withWaitCap is a golden definition as served under the wait cap
// maxWait: timeout_seconds (if the tool has it) states that cap.
func withWaitCap(t *testing.T, def []byte, maxWait time.Duration) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(def, &m); err != nil {
		t.Fatal(err)
	}
	props, _ := m["inputSchema"].(map[string]any)["properties"].(map[string]any)
	if p, ok := props["timeout_seconds"].(map[string]any); ok {
		secs := int(maxWait / time.Second)
		p["maximum"] = secs
		p["description"] = fmt.Sprintf(timeoutDescription, secs)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGoldenToolList: every profile lists exactly the tools of its golden
// name list, and serves each exactly as its one golden definition, on
// both protocol versions; every tool is listed by some profile, and no
// golden definition is left without a tool. Refresh with
//
//	go test ./mcpserver -run TestGoldenToolList -update
//
// which fails rather than write when two profiles serve one tool
// differently.
func TestGoldenToolList(t *testing.T) {
	t.Parallel()
	profiles := goldenProfiles()
	type listing struct {
		names []string
		defs  map[string][]byte
	}
	got := make([][]listing, len(profiles))
	// The group returns once its parallel subtests have all run.
	t.Run("list", func(t *testing.T) {
		for i, p := range profiles {
			got[i] = make([]listing, len(protocols))
			for j, pv := range protocols {
				t.Run(fmt.Sprintf("%s/wait=%v/%s", p.name, p.maxWait, protoName(pv)), func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{ReadOnly: p.readOnly}, policy: p.policy, maxWait: p.maxWait})
					names, defs := goldenTools(t, f.cs)
					got[i][j] = listing{names, defs}
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	// One definition per tool, from every listing that has it.
	defs := map[string][]byte{}
	from := map[string]string{}
	for i, p := range profiles {
		for j, l := range got[i] {
			for _, name := range l.names {
				def := l.defs[name]
				if p.maxWait != 0 {
					continue // compared below, against the default cap's
				}
				where := p.name + "/" + protoName(protocols[j])
				if prev, ok := defs[name]; ok && !bytes.Equal(prev, def) {
					t.Errorf("%s: %s serves another definition than %s:\n%s\n%s", name, where, from[name], prev, def)
					continue
				}
				defs[name], from[name] = def, where
			}
		}
	}
	for _, ti := range Tools(nil, nil) {
		if defs[ti.Name] == nil {
			t.Errorf("%s: no golden profile lists it (add it to one in goldenProfiles)", ti.Name)
		}
	}
	if t.Failed() {
		return
	}
	if *update {
		lists := map[string][]string{}
		for i, p := range profiles {
			for _, l := range got[i] {
				if prev, ok := lists[p.name]; ok && !slices.Equal(prev, l.names) {
					t.Fatalf("profile %s lists other tools in another run: %v, %v", p.name, prev, l.names)
				}
				lists[p.name] = l.names
			}
		}
		writeGoldens(t, lists, defs)
		return
	}
	for i, p := range profiles {
		want := readGolden(t, filepath.Join("testdata", "profiles", p.name+".txt"))
		for j, l := range got[i] {
			if g := strings.Join(l.names, "\n") + "\n"; g != string(want) {
				t.Errorf("profile %s (wait cap %v, %s) lists other tools than testdata/profiles/%s.txt (run go test ./mcpserver -run TestGoldenToolList -update if intended):\n%s",
					p.name, p.maxWait, protoName(protocols[j]), p.name, g)
			}
		}
	}
	for name, def := range defs {
		want := readGolden(t, goldenToolPath(name))
		if !bytes.Equal(def, want) {
			t.Errorf("%s is served other than %s (run go test ./mcpserver -run TestGoldenToolList -update if intended):\n%s", name, goldenToolPath(name), def)
		}
	}
	for i, p := range profiles {
		if p.maxWait == 0 {
			continue
		}
		for _, l := range got[i] {
			for _, name := range l.names {
				if want := withWaitCap(t, readGolden(t, goldenToolPath(name)), p.maxWait); !bytes.Equal(l.defs[name], want) {
					t.Errorf("%s under wait cap %v differs from its golden definition beyond timeout_seconds:\n%s\nwant\n%s", name, p.maxWait, l.defs[name], want)
				}
			}
		}
	}
	files, err := filepath.Glob(goldenToolPath("*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if name := strings.TrimSuffix(filepath.Base(file), ".json"); defs[name] == nil {
			t.Errorf("%s: golden definition of no tool (run go test ./mcpserver -run TestGoldenToolList -update to remove it)", file)
		}
	}
}

func goldenToolPath(name string) string { return filepath.Join("testdata", "tools", name+".json") }

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./mcpserver -run TestGoldenToolList -update to create it)", err)
	}
	return b
}

// writeGoldens rewrites testdata/profiles and testdata/tools, removing
// the definitions of tools that are gone.
func writeGoldens(t *testing.T, lists map[string][]string, defs map[string][]byte) {
	t.Helper()
	for _, dir := range []string{"profiles", "tools"} {
		if err := os.MkdirAll(filepath.Join("testdata", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, names := range lists {
		list := strings.Join(names, "\n") + "\n"
		if err := os.WriteFile(filepath.Join("testdata", "profiles", name+".txt"), []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(goldenToolPath("*"))
	for _, file := range files {
		if defs[strings.TrimSuffix(filepath.Base(file), ".json")] == nil {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, def := range defs {
		if err := os.WriteFile(goldenToolPath(name), def, 0o644); err != nil {
			t.Fatal(err)
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
