package settings

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

// TestToolSelection: the four selection settings, as flags and as
// variables, fill Config.Selection; an unknown toolset or tool is refused
// at start, naming the known toolsets.
func TestToolSelection(t *testing.T) {
	c, err := Parse([]string{"--demo", "--toolsets", "snapshots,cluster", "--exclude-tools", "vm_reset", "doctor"},
		env("PROXMOX_SAFE_TOOLS", "guest_power", "PROXMOX_SAFE_EXCLUDE_TOOLSETS", "gateway"))
	if err != nil {
		t.Fatal(err)
	}
	want := mcpserver.Selection{Toolsets: []mcpserver.Toolset{mcpserver.ToolsetSnapshots, mcpserver.ToolsetCluster}, Tools: []string{"guest_power"},
		ExcludeToolsets: []mcpserver.Toolset{mcpserver.ToolsetGateway}, ExcludeTools: []string{"vm_reset"}}
	if got := c.Selection; !slices.Equal(got.Toolsets, want.Toolsets) || !slices.Equal(got.Tools, want.Tools) ||
		!slices.Equal(got.ExcludeToolsets, want.ExcludeToolsets) || !slices.Equal(got.ExcludeTools, want.ExcludeTools) {
		t.Errorf("selection = %+v, want %+v", got, want)
	}
	for _, args := range [][]string{{"--toolsets", "snapshot"}, {"--tools", "guest_pwer"}, {"--exclude-toolsets", "x"}, {"--exclude-tools", "y"}} {
		_, err := Parse(append([]string{"--demo"}, append(args, "doctor")...), env())
		if err == nil || !strings.Contains(err.Error(), "unknown") || !strings.Contains(err.Error(), "snapshots") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if c, err := Parse([]string{"--demo", "doctor"}, env()); err != nil || !c.Selection.IsZero() {
		t.Errorf("default selection %+v, %v", c.Selection, err)
	}
}
