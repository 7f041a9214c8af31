package main

import (
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
