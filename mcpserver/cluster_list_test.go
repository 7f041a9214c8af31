package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestClusterList: the fleet's cluster_list names every cluster with its
// API host, version, quorum and the policy in force; a cluster that is
// down is reported inline as unreachable, the others still listed.
func TestClusterList(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	ro := newFleetMember(t, "ro", proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, ReadOnly: true})
	down := newFleetMember(t, "down", defaultPolicy())
	down.fake.Close()
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, ro, down), nil), "")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolClusterList, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("cluster_list: %v %s", err, mustJSON(t, res))
	}
	var out ClusterListResult
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Clusters) != 3 || out.Unreachable != 1 {
		t.Fatalf("clusters %+v", out)
	}
	l, r, d := out.Clusters[0], out.Clusters[1], out.Clusters[2]
	if l.Name != "lab" || !l.Reachable || l.Version == "" || !l.Quorate || l.Nodes == 0 || l.API != lab.client.Cluster().URL ||
		l.Policy.Profile != "safe" || l.Policy.ReadOnly || len(l.Policy.Classes) != 2 || l.Policy.Protected != 1 ||
		strings.Join(l.Policy.Approvals["power"], ",") != "phrase" {
		t.Errorf("lab: %+v", l)
	}
	if r.Name != "ro" || !r.Reachable || !r.Policy.ReadOnly || r.Policy.Profile != "readonly" || len(r.Policy.Classes) != 0 {
		t.Errorf("ro: %+v", r)
	}
	if d.Name != "down" || d.Reachable || d.Error == "" {
		t.Errorf("down: %+v", d)
	}
	if txt := text(t, res); !strings.Contains(txt, "3 clusters, 1 unreachable") {
		t.Errorf("text: %s", txt)
	}
	for _, m := range []*fleetMember{lab, ro} {
		if n := len(m.fake.MutatingRequests()); n != 0 {
			t.Errorf("%s: %d mutating requests", m.name, n)
		}
	}
}
