package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestNodeStatusTool: node_status answers one line a person reads (the
// node, its uptime, CPU count and memory) and the library's result as
// structured content; a node off the allowlist is refused without a
// request.
func TestNodeStatusTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	var want proxmoxtest.Node
	f.fake.View(func(c *proxmoxtest.Cluster) {
		for _, n := range c.Nodes {
			if n.Name == "pve1" {
				want = *n
			}
		}
	})
	res := f.call(t, t.Context(), ToolNodeStatus, map[string]any{"node": "pve1"})
	txt := text(t, res)
	if res.IsError || !strings.HasPrefix(txt, "Node pve1: up "+duration(want.Uptime)+", CPU ") || !strings.Contains(txt, "memory "+gib(want.Mem)+" of "+gib(want.MaxMem)) {
		t.Fatalf("node_status: %v %q", res.IsError, txt)
	}
	var out proxmoxsafe.NodeStatusResult
	structured(t, res, &out)
	if out.Node != "pve1" || out.CPUs != want.CPUs || out.Memory.Total != want.MaxMem {
		t.Errorf("structured = %+v, want the fake's pve1 %+v", out, want)
	}

	f.fake.ResetRequests()
	res = f.call(t, t.Context(), ToolNodeStatus, map[string]any{"node": "pve3"})
	if !res.IsError || !strings.Contains(text(t, res), "pve3") {
		t.Errorf("pve3 (off the allowlist): %v %q", res.IsError, text(t, res))
	}
	if r := f.fake.Requests(); len(r) != 0 {
		t.Errorf("a refused node_status sent %d requests", len(r))
	}
}
