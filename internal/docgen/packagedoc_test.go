package main

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestPackageDocListsEveryOperation(t *testing.T) {
	t.Parallel()
	doc := "// Package p.\n//\n// # Operations\n//\n// stale text\n//\n// # Errors\n//\n// Refusals.\npackage p\n"
	got, err := renderPackageDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "stale text") {
		t.Error("the old section was kept")
	}
	if !strings.HasSuffix(got, "//\n// # Errors\n//\n// Refusals.\npackage p\n") || !strings.HasPrefix(got, "// Package p.\n//\n// # Operations\n") {
		t.Errorf("the prose around the section changed:\n%s", got)
	}
	for _, op := range proxmoxsafe.Operations() {
		if !strings.Contains(got, "[Client."+string(op.Name)+"]") {
			t.Errorf("%s is not listed", op.Name)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if len(line) > 80 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	// Generating twice changes nothing.
	again, err := renderPackageDoc(got)
	if err != nil || again != got {
		t.Errorf("not idempotent: %v", err)
	}
}

func TestPackageDocNeedsItsHeadings(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"no heading":       "// Package p.\npackage p\n",
		"no heading after": "// Package p.\n//\n// # Operations\n//\n// x\npackage p\n",
	} {
		if _, err := renderPackageDoc(doc); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
