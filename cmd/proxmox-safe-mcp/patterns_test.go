package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// TestPatternsCompile: the package-level regular expressions of every
// package this binary links are compiled on first use (internal/lazyre), not
// at start; each must still compile.
func TestPatternsCompile(t *testing.T) {
	if err := lazyre.CompileAll(); err != nil {
		t.Fatal(err)
	}
}

// TestNoCompileAtInit: no package the binary is built from compiles a
// regular expression or parses a template in a package-level variable's
// initializer, which would run at every start of the binary whether or
// not it is ever used, and slow every start. Use internal/lazyre (or sync.OnceValue)
// instead. Function bodies, tests, bench/ and examples/ are not checked.
func TestNoCompileAtInit(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]bool{"regexp.MustCompile": true, "regexp.Compile": true, "template.Must": true, "regexp.MustCompilePOSIX": true}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"),
				rel == "bench", rel == "examples", strings.HasSuffix(rel, filepath.Join("internal", "pvefacts")):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			ast.Inspect(gd, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // runs when called, not at init
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && banned[id.Name+"."+sel.Sel.Name] {
							t.Errorf("%s: %s.%s in a package-level variable runs at every start; use internal/lazyre or sync.OnceValue", rel, id.Name, sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
