package testutil

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DocLinks returns one problem per doc link in the package comment of
// dir's doc.go that names nothing: a link to a renamed or removed
// identifier renders as plain text in go doc and on pkg.go.dev, without a
// warning anywhere. A link into another of our packages ([proxmoxsafe.AuditRecord])
// is checked against that package when others maps its name to its
// directory; links into any other package are not checked.
func DocLinks(dir string, others map[string]string) ([]string, error) {
	self, err := docPackage(dir)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil {
		return []string{"doc.go has no package comment"}, nil
	}
	// Parse permissively so that every link-shaped text becomes a DocLink,
	// then judge each against the real symbols.
	p := comment.Parser{
		LookupPackage: func(name string) (string, bool) {
			_, ok := others[name]
			return name, ok
		},
		LookupSym: func(recv, name string) bool { return true },
	}
	var problems []string
	for _, l := range docLinks(p.Parse(f.Doc.Text())) {
		target := self
		if l.ImportPath != "" {
			odir, ours := others[l.ImportPath]
			if !ours {
				continue // the standard library's: the parser knows its names
			}
			if l.Name == "" {
				continue // [proxmoxsafe]: the package itself
			}
			if target, err = docPackage(odir); err != nil {
				return nil, err
			}
		}
		if l.Name == "" || !target.Parser().LookupSym(l.Recv, l.Name) {
			problems = append(problems, "["+linkText(l)+"] names nothing")
		}
	}
	return problems, nil
}

// CheckDocLinks fails t for every problem [DocLinks] finds.
func CheckDocLinks(t testing.TB, dir string, others map[string]string) {
	t.Helper()
	problems, err := DocLinks(dir, others)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s/doc.go: %s", dir, p)
	}
}

func docPackage(dir string) (*doc.Package, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	return doc.NewFromFiles(fset, files, "example.com/"+filepath.Base(dir))
}

func docLinks(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				out = append(out, t)
			case *comment.Link:
				text(t.Text)
			case comment.Italic, comment.Plain:
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			text(b.Text)
		case *comment.Heading:
			text(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						text(p.Text)
					}
				}
			}
		}
	}
	return out
}

func linkText(l *comment.DocLink) string {
	s := l.Name
	if l.Recv != "" {
		s = l.Recv + "." + s
	}
	if l.ImportPath != "" {
		s = l.ImportPath + "." + s
	}
	return s
}
