package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFloorImportsMatchCommand keeps imports.go (-tags floorimports) to
// what it says: every package the command imports that the floor does not
// link already, and nothing else. A package added to the command and not
// here would make floor-imports / floor understate what our packages cost
// by being in the binary.
func TestFloorImportsMatchCommand(t *testing.T) {
	command := goList(t, "-f", "{{join .Imports \"\\n\"}}", "../../../cmd/proxmox-safe-mcp")
	floor := goList(t, "-deps", ".")
	var want []string
	for _, p := range command {
		if !slices.Contains(floor, p) {
			want = append(want, p)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "imports.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("imports.go imports\n\t%s\nwant the command's imports the floor does not link\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}
