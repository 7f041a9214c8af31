// Package doccheck holds a test that every exported identifier of the public
// packages has a doc comment.
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// publicPackages are the directories whose exported API users read.
var publicPackages = []string{"proxmoxsafe", "proxmoxsafe/proxmoxtest", "proxmoxsafe/retention", "mcpserver", "mcphttp", "mcpstdio", "approvalweb"}

func TestExportedIdentifiersHaveDocComments(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	for _, dir := range publicPackages {
		path := filepath.Join(root, dir)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, path, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			for name, f := range pkg.Files {
				for _, missing := range undocumented(f) {
					t.Errorf("%s: %s has no doc comment", filepath.ToSlash(strings.TrimPrefix(name, root+string(filepath.Separator))), missing)
				}
			}
		}
	}
}

func undocumented(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil {
				if !receiverExported(d.Recv) {
					continue
				}
				out = append(out, "method "+d.Name.Name)
				continue
			}
			out = append(out, "func "+d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
						out = append(out, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						// A documented group (const ( … ) with a comment) covers its members.
						if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
							out = append(out, "value "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func receiverExported(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	t := fl.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
