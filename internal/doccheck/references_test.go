package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// privateReferences are pointers to material that only exists in the
// developers' workspace (the design notes and the Proxmox API fact sheet
// beside the repository), not in a clone a user has.
var privateReferences = regexp.MustCompile(`FACTS §|DESIGN §|DESIGN\.md|shared notes|\.\./shared|pve-api/FACTS`)

// TestNoReferencesToPrivateFiles: the README, docs/ and the shipped code
// must not send a reader to files they do not have: a pointer nobody can
// follow reads as a gap in the docs. Tests may name them: they document where a fixture's rule came from.
func TestNoReferencesToPrivateFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." && path != root || d.Name() == "node_modules" || rel == "ci/.cache" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "CHANGELOG.md" || strings.HasSuffix(rel, "_test.go") ||
			!(strings.HasSuffix(rel, ".md") || strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".sh")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if privateReferences.MatchString(line) {
				t.Errorf("%s:%d points to a file users do not have: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
