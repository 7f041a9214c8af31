package mcphttp

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNothingFromTheModule keeps mcphttp generic: it serves any
// go-sdk server, so it must not depend on the Proxmox adapter or library
// (that dependency is why it used to live under mcpserver/).
func TestImportsNothingFromTheModule(t *testing.T) {
	t.Parallel()
	const module = "github.com/proxmoxsafe/proxmox-safe-mcp/"
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				t.Errorf("%s imports %s: mcphttp must stay independent of the rest of the module", name, p)
			}
		}
	}
}
