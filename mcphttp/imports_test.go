package mcphttp

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/proxmoxsafe/proxmox-safe-mcp/"

// allowedFromTheModule is the one package of the module mcphttp may
// import: internal/jsonrpc, the JSON-RPC error encoding it shares with the
// stdio transport (mcpstdio), so that both answer the same mistake with the
// same bytes instead of keeping two copies. It is a leaf that imports
// nothing of the module, which this test checks too, so mcphttp still
// depends on neither the library nor the adapter.
const allowedFromTheModule = module + "internal/jsonrpc"

// TestImportsNothingFromTheModule keeps mcphttp generic: it serves any
// go-sdk server, so it must not depend on the Proxmox adapter or library
// (that dependency is why it used to live under mcpserver/).
func TestImportsNothingFromTheModule(t *testing.T) {
	t.Parallel()
	for _, p := range moduleImports(t, ".") {
		if p != allowedFromTheModule {
			t.Errorf("%s: mcphttp must stay independent of the rest of the module (it may import only %s)", p, allowedFromTheModule)
		}
	}
	for _, p := range moduleImports(t, filepath.Join("..", strings.TrimPrefix(allowedFromTheModule, module))) {
		t.Errorf("%s: %s must import nothing of the module, or mcphttp depends on it through it", p, allowedFromTheModule)
	}
}

// moduleImports lists the imports of the module
// by the non-test files in dir.
func moduleImports(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, module) {
				found = append(found, p)
			}
		}
	}
	return found
}
