package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestNodeHealthTool: over MCP, node_health answers the demo's pve2 (a
// failing disk, a worn SSD, a degraded pool, a failed service) in one
// line and as structured content; a token without Sys.Modify gets every
// part but the updates, which say "not permitted"; an offline node is an
// answer, not an error; a node off the allowlist sends nothing.
func TestNodeHealthTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	res := f.call(t, t.Context(), ToolNodeHealth, map[string]any{"node": "pve2"})
	want := "Node pve2: updates 0 pending; services 19, 1 failed; disks 2, 1 failing SMART; ZFS pools 1, 1 not online; replication jobs 0, 0 failing"
	if txt := text(t, res); res.IsError || !strings.HasPrefix(txt, want) {
		t.Fatalf("node_health pve2: %v %q\nwant %q", res.IsError, txt, want)
	}
	var out proxmoxsafe.NodeHealthResult
	structured(t, res, &out)
	if out.Disks.Disks[0].Wearout == nil || *out.Disks.Disks[0].Wearout != 4 || out.Disks.Disks[1].Wearout != nil || out.ZFS.Pools[0].State != "DEGRADED" {
		t.Errorf("structured = %+v", out)
	}

	c := proxmoxtest.DemoCluster()
	c.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {Secret: proxmoxtest.DefaultTokenSecret,
		Privileges: map[string][]string{"/": {"Sys.Audit", "VM.Audit", "Datastore.Audit"}}}}
	c.Nodes[1].Online = false
	pol := defaultPolicy()
	f = newFixture(t, t.Context(), "", fixtureConfig{cluster: c, policy: &pol})
	res = f.call(t, t.Context(), ToolNodeHealth, map[string]any{"node": "pve1"})
	want = "Node pve1: updates not permitted; services 19, 0 failed; disks 2, 0 failing SMART; ZFS pools 1, 0 not online; replication jobs 2, 1 failing"
	if txt := text(t, res); res.IsError || !strings.HasPrefix(txt, want+"\n") {
		t.Errorf("without Sys.Modify: %v %q\nwant %q", res.IsError, txt, want)
	}
	structured(t, res, &out)
	if out.Updates.Status != proxmoxsafe.PartNotPermitted || !strings.Contains(out.Updates.Problem, "Sys.Modify on /nodes/pve1") {
		t.Errorf("updates = %+v", out.Updates)
	}
	res = f.call(t, t.Context(), ToolNodeHealth, map[string]any{"node": "pve2"})
	if txt := text(t, res); res.IsError || !strings.HasPrefix(txt, "Node pve2 is offline or unreachable: nothing could be read\n") {
		t.Errorf("offline: %v %q", res.IsError, txt)
	}

	f.fake.ResetRequests()
	res = f.call(t, t.Context(), ToolNodeHealth, map[string]any{"node": "pve3"})
	if !res.IsError || !strings.Contains(text(t, res), "allowlist") {
		t.Errorf("pve3 (off the allowlist): %v %q", res.IsError, text(t, res))
	}
	if r := f.fake.Requests(); len(r) != 0 {
		t.Errorf("a refused node_health sent %d requests", len(r))
	}
}
