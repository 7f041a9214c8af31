package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestClusterStatusOfflineAndUnreachable: cluster_status answers with an
// offline node and with a 595 on /cluster/resources, naming both.
func TestClusterStatusOfflineAndUnreachable(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			c := proxmoxtest.DemoCluster()
			c.Nodes[2].Online = false
			f := newFixture(t, t.Context(), pv, fixtureConfig{cluster: c})
			res := f.call(t, t.Context(), ToolClusterStatus, nil)
			msg := text(t, res)
			if !strings.Contains(msg, "3 nodes (2 online)") || !strings.Contains(msg, "pve3: offline") {
				t.Errorf("text = %q", msg)
			}
			var out proxmoxsafe.ClusterStatusResult
			structured(t, res, &out)
			if out.Nodes[0].Usage == nil || out.Nodes[2].Usage != nil || out.Nodes[2].Online {
				t.Errorf("nodes = %+v", out.Nodes)
			}

			f.fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/resources", Status: 595, Reason: "No route to host"})
			res = f.call(t, t.Context(), ToolClusterStatus, nil)
			msg = text(t, res)
			if res.IsError || !strings.Contains(msg, "warning: per-node usage could not be read") || !strings.Contains(msg, "595 No route to host (Proxmox could not connect") {
				t.Errorf("text = %q", msg)
			}
		})
	}
}
