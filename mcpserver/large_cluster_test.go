package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestLargeClusterAnswers: on the 10,000-guest fixture (10 nodes), the
// cluster-wide reads that have no page of their own answer within the
// bound every list answer keeps, 64 KiB of structured content and of text:
// the health report (bounded per-guest reads and findings), a node's
// health, the backup jobs and a default page of backup coverage (its
// guests carry their newest backup: the page ends early by size).
//
//	go test ./mcpserver -run TestLargeClusterAnswers -v
//
// prints each answer's size.
func TestLargeClusterAnswers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f, c := largeClusterFixture(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{ToolHealthReport, map[string]any{}},
		{ToolNodeHealth, map[string]any{"node": c.Nodes[0].Name}},
		{ToolBackupJobs, map[string]any{}},
		{ToolBackupCoverage, map[string]any{}},
	} {
		res := f.call(t, ctx, tc.tool, tc.args)
		if res.IsError {
			t.Fatalf("%s: %s", tc.tool, text(t, res))
		}
		js, txt := len(mustJSON(t, res.StructuredContent)), len(text(t, res))
		if js > 64<<10 || txt > 64<<10 {
			t.Errorf("%s: structured %d B, text %d B: want at most 64 KiB each", tc.tool, js, txt)
		}
		t.Logf("%s on 10,000 guests: structured %d B, text %d B", tc.tool, js, txt)
	}
}

// largeClusterFixture serves the 10,000-guest fixture (10 nodes of 1,000
// guests each, every node allowlisted) to a client session.
func largeClusterFixture(t *testing.T) (*fixture, *proxmoxtest.Cluster) {
	t.Helper()
	c := proxmoxtest.GenerateCluster(10, 1000, 1)
	pol := defaultPolicy()
	pol.AllowedNodes = nil
	for _, n := range c.Nodes {
		pol.AllowedNodes = append(pol.AllowedNodes, n.Name)
	}
	return newFixture(t, t.Context(), "", fixtureConfig{cluster: c, policy: &pol}), c
}
