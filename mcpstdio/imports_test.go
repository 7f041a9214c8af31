package mcpstdio

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNothingFromTheModule keeps mcpstdio generic, as mcphttp is: it
// serves any go-sdk server, so it must not depend on the Proxmox adapter or
// library. The one package of the module it imports is internal/jsonrpc,
// the JSON-RPC error encoding it shares with mcphttp (mcphttp's test of the
// same name checks that that package stays a leaf).
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
			if strings.HasPrefix(p, module) && p != module+"internal/jsonrpc" {
				t.Errorf("%s imports %s: mcpstdio must stay independent of the rest of the module", name, p)
			}
		}
	}
}
