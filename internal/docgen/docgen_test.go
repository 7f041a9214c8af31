package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

var update = flag.Bool("update", false, "rewrite docs/TOOLS.md and the README tool table")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const root = "../.."

// TestDocsUpToDate fails when docs/TOOLS.md or the README tool block differ
// from what `go run ./internal/docgen` writes, and when README.md exists
// without the markers.
func TestDocsUpToDate(t *testing.T) {
	t.Parallel()
	if *update {
		if err := run(root, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("docs/TOOLS.md", func(t *testing.T) {
		t.Parallel()
		checkFile(t, filepath.Join("docs", "TOOLS.md"), []byte(renderToolsMD(mcpserver.Tools(nil, nil))))
	})
	t.Run("README.md", func(t *testing.T) {
		t.Parallel()
		old, err := os.ReadFile(filepath.Join(root, "README.md"))
		if errors.Is(err, os.ErrNotExist) {
			t.Skip("no README.md")
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := replaceBlock(string(old), renderReadmeTable(mcpserver.Tools(nil, nil)))
		if err != nil {
			t.Fatalf("README.md: %v; then run go run ./internal/docgen", err)
		}
		checkFile(t, "README.md", []byte(want))
	})
	t.Run(packageDocPath, func(t *testing.T) {
		t.Parallel()
		old, err := os.ReadFile(filepath.Join(root, packageDocPath))
		if err != nil {
			t.Fatal(err)
		}
		want, err := renderPackageDoc(string(old))
		if err != nil {
			t.Fatalf("%s: %v; then run go run ./internal/docgen", packageDocPath, err)
		}
		checkFile(t, packageDocPath, []byte(want))
	})
	t.Run("docs/CONFIGURATION.md", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join("docs", "CONFIGURATION.md")
		old, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		want, err := renderConfiguration(string(old))
		if err != nil {
			t.Fatalf("%s: %v; then run go run ./internal/docgen", path, err)
		}
		checkFile(t, path, []byte(want))
	})
}

func checkFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatalf("%v (run go run ./internal/docgen)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date: run go run ./internal/docgen", path)
	}
}

func TestToolsMDCoversEveryTool(t *testing.T) {
	t.Parallel()
	tools := mcpserver.Tools(nil, nil)
	md := renderToolsMD(tools)
	for _, tool := range tools {
		for _, want := range []string{"## " + tool.Name, prose(tool.Description), tool.Privileges[0]} {
			if !strings.Contains(md, want) {
				t.Errorf("TOOLS.md lacks %q", want)
			}
		}
		if tool.ApprovalFormat != "" && !strings.Contains(md, "`"+tool.ApprovalFormat+"`") {
			t.Errorf("TOOLS.md lacks the approval format of %s", tool.Name)
		}
	}
	// Outside code spans, "<action>" would be an HTML tag on GitHub.
	for i, part := range strings.Split(md, "`") {
		if i%2 == 0 && strings.Contains(part, "<action>") {
			t.Errorf("TOOLS.md has an unescaped <action> outside code: %q", part)
		}
	}
	for _, want := range []string{"maximum 120", "one of `qemu`, `lxc`", "at most 256 characters", "destructiveHint: true"} {
		if !strings.Contains(md, want) {
			t.Errorf("TOOLS.md lacks %q", want)
		}
	}
}

// TestNamesTable: the frozen names table lists every tool once, and its
// notes name real tools.
func TestNamesTable(t *testing.T) {
	t.Parallel()
	tools := mcpserver.Tools(nil, nil)
	table := renderNames(tools)
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
		if strings.Count(table, "| `"+tool.Name+"` |") != 1 {
			t.Errorf("names table: %s not listed exactly once", tool.Name)
		}
	}
	for _, n := range originalTools {
		if !names[n] {
			t.Errorf("originalTools: %s is no tool", n)
		}
	}
	for n := range beforeTheRule {
		if !names[n] {
			t.Errorf("beforeTheRule: %s is no tool", n)
		}
	}
	if !strings.Contains(table, "| `list_guests` | the original server | no (today: `guest_list`) |") {
		t.Errorf("names table:\n%s", table)
	}
}

func TestReplaceBlock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		doc     string
		want    string
		wantErr string
	}{
		{
			name: "replaces between markers",
			doc:  "# Title\n\n" + startMarker + "\nold table\n" + endMarker + "\n\nrest\n",
			want: "# Title\n\n" + startMarker + "\n" + generatedNote + "\n\nNEW\n\n" + endMarker + "\n\nrest\n",
		},
		{
			name: "idempotent",
			doc:  "x\n" + startMarker + "\n" + generatedNote + "\n\nNEW\n\n" + endMarker + "\n",
			want: "x\n" + startMarker + "\n" + generatedNote + "\n\nNEW\n\n" + endMarker + "\n",
		},
		{name: "no markers", doc: "# Title\n", wantErr: "marker"},
		{name: "only start", doc: startMarker + "\n", wantErr: "marker"},
		{name: "reversed", doc: endMarker + "\n" + startMarker + "\n", wantErr: "before"},
		{name: "duplicated", doc: startMarker + endMarker + startMarker + endMarker, wantErr: "exactly one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := replaceBlock(tt.doc, "NEW\n")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestGenerateReadme(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// No README: only TOOLS.md.
	outs, err := generate(dir)
	if err != nil || len(outs) != 1 {
		t.Fatalf("without README: %d outputs, %v", len(outs), err)
	}
	// README without markers: a clear error.
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "README.md") || !strings.Contains(err.Error(), startMarker) {
		t.Fatalf("README without markers: err = %v", err)
	}
	if readme, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(readme) != "# x\n" {
		t.Errorf("a README without markers was changed: %q", readme)
	}
	// With markers: the table lands between them; run writes both files.
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# x\n"+startMarker+"\n"+endMarker+"\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range mcpserver.Tools(nil, nil) {
		if !strings.Contains(string(readme), "`"+tool.Name+"`") {
			t.Errorf("README table lacks %s", tool.Name)
		}
	}
	if !strings.HasSuffix(string(readme), endMarker+"\nend\n") {
		t.Errorf("text after the block changed: %q", readme)
	}
	if _, err := os.Stat(filepath.Join(dir, "docs", "TOOLS.md")); err != nil {
		t.Error(err)
	}
}
