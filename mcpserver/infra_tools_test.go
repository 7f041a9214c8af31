package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var infraTools = []string{ToolStorageList, ToolBackupList, ToolCephStatus, ToolHAStatus, ToolPermissionsCheck}

// infraTool looks a tool up by name, so tests do not depend on list order.
func infraTool(t testing.TB, name string) ToolInfo {
	t.Helper()
	for _, ti := range Tools(nil, nil) {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("no tool %s", name)
	return ToolInfo{}
}

// TestToolOperationsComplete: every tool maps to library operations that
// exist, so permissions_check covers every tool.
func TestToolOperationsComplete(t *testing.T) {
	t.Parallel()
	known := proxmoxsafe.OperationNames()
	for _, ti := range Tools(nil, nil) {
		ops := ToolOperations(ti.Name)
		if len(ops) == 0 {
			t.Errorf("tool %s has no entry in toolOperations", ti.Name)
		}
		for _, op := range ops {
			if !slices.Contains(known, op) {
				t.Errorf("tool %s: operation %s is not in proxmoxsafe.OperationNames()", ti.Name, op)
			}
		}
	}
}

func TestInfraToolsMetadata(t *testing.T) {
	t.Parallel()
	for _, name := range infraTools {
		ti := infraTool(t, name)
		if ti.Annotations != readAnnotations && (!ti.Annotations.ReadOnlyHint || *ti.Annotations.DestructiveHint) {
			t.Errorf("%s: annotations %+v", name, ti.Annotations)
		}
		if ti.Class != "" || len(ti.Privileges) == 0 || ti.OutputSchema == nil || ti.OutputSchema.Type != "object" {
			t.Errorf("%s: %+v", name, ti)
		}
	}
	if p := infraTool(t, ToolBackupList).Privileges; !slices.Contains(p, "Datastore.Audit on /storage/{storage}") || len(p) != 3 {
		t.Errorf("backup_list privileges = %v", p)
	}
	in := infraTool(t, ToolBackupList).InputSchema
	if !slices.Equal(in.Required, []string{"node", "storage"}) {
		t.Errorf("backup_list input = %+v", in)
	}
}

func infraFixtureCluster() *proxmoxtest.Cluster {
	c := proxmoxtest.DemoCluster()
	c.Ceph = proxmoxtest.DemoCeph("pve1", "pve2", "pve3")
	return c
}

func TestInfraToolsHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cluster  func() *proxmoxtest.Cluster
		tool     string
		args     map[string]any
		requests []string
		query    string // of the first request
		wantText []string
		check    func(t *testing.T, res *mcp.CallToolResult)
	}{
		{
			name: "storage_list cluster-wide", tool: ToolStorageList,
			requests: []string{"GET /cluster/resources"}, query: "type=storage",
			wantText: []string{"Listed 12 of 12 storage entries cluster-wide"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.ListStorageResult
				structured(t, res, &out)
				if out.Scope != "cluster" || out.Storages[0].Storage != "local" || out.Storages[0].Node != "pve1" {
					t.Errorf("out = %+v", out)
				}
			},
		},
		{
			name: "storage_list node", tool: ToolStorageList, args: map[string]any{"node": "pve2", "limit": 1},
			requests: []string{"GET /nodes/pve2/storage"},
			wantText: []string{"Listed 1 of 4 storage entries on pve2"},
		},
		{
			name: "backup_list", tool: ToolBackupList, args: map[string]any{"node": "pve1", "storage": "local"},
			requests: []string{"GET /nodes/pve1/storage/local/content"}, query: "content=backup",
			wantText: []string{"Listed 4 of 4 backups on local as seen from pve1, newest 2026-01-01"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.ListBackupsResult
				structured(t, res, &out)
				var ids []int
				for _, b := range out.Backups {
					ids = append(ids, b.VMID)
				}
				if !slices.Equal(ids, []int{200, 102, 101, 100}) {
					t.Errorf("vmids = %v, want newest first", ids)
				}
			},
		},
		{
			name: "backup_list vmid", tool: ToolBackupList, args: map[string]any{"node": "pve1", "storage": "local", "vmid": 101},
			requests: []string{"GET /nodes/pve1/storage/local/content"}, query: "content=backup&vmid=101",
			wantText: []string{"Listed 1 of 1 backups"},
		},
		{
			name: "ceph_status absent", tool: ToolCephStatus,
			requests: []string{"GET /cluster/ceph/status"},
			wantText: []string{"Ceph is not installed on this cluster"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.CephStatusResult
				structured(t, res, &out)
				if out.Installed {
					t.Errorf("out = %+v", out)
				}
			},
		},
		{
			name: "ceph_status present", cluster: infraFixtureCluster, tool: ToolCephStatus,
			requests: []string{"GET /cluster/ceph/status"},
			wantText: []string{"Ceph HEALTH_WARN: 3/3 monitors in quorum, OSDs 6 up / 6 in of 6, 128 PGs", "checks: OSD_NEARFULL"},
		},
		{
			name: "ha_status", tool: ToolHAStatus,
			requests: []string{"GET /cluster/ha/status/current", "GET /cluster/ha/resources"},
			wantText: []string{"HA quorate, manager on pve1; 1 resources: 1 started"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.HAStatusResult
				structured(t, res, &out)
				if len(out.Services) != 1 || out.Services[0].SID != "vm:101" {
					t.Errorf("out = %+v", out)
				}
			},
		},
		{
			name: "permissions_check over-privileged", tool: ToolPermissionsCheck,
			requests: []string{"GET /access/permissions", "GET /version"},
			wantText: []string{"Token automation@pve!mcp: every offered tool", "WARNING: the token holds dangerous privileges no tool needs: ", "Permissions.Modify"},
			check: func(t *testing.T, res *mcp.CallToolResult) {
				var out PermissionsCheckResult
				structured(t, res, &out)
				offered := 0 // the test client enables power and snapshot
				for _, ti := range Tools(nil, nil) {
					if ti.Class == "" || ti.Class == proxmoxsafe.ClassPower || ti.Class == proxmoxsafe.ClassSnapshot {
						offered++
					}
				}
				if !out.OK || !out.Dangerous || len(out.Missing) != 0 || len(out.Tools) != offered {
					t.Errorf("out = %+v", out)
				}
			},
		},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var c *proxmoxtest.Cluster
				if tt.cluster != nil {
					c = tt.cluster()
				}
				f := newFixture(t, t.Context(), pv, fixtureConfig{cluster: c})
				res := f.call(t, t.Context(), tt.tool, tt.args)
				if res.IsError {
					t.Fatalf("tool error: %s", text(t, res))
				}
				msg := text(t, res)
				for _, w := range tt.wantText {
					if !strings.Contains(msg, w) {
						t.Errorf("text %q does not contain %q", msg, w)
					}
				}
				reqs := f.fake.Requests()
				// Compared in order of path: a tool's reads may go out at
				// once (permissions_check reads the release beside the map).
				if got := slices.Sorted(slices.Values(requestLines(reqs))); !slices.Equal(got, slices.Sorted(slices.Values(tt.requests))) {
					t.Errorf("upstream requests = %v, want %v", got, tt.requests)
				}
				if tt.query != "" && reqs[0].Query.Encode() != tt.query {
					t.Errorf("query = %q, want %q", reqs[0].Query.Encode(), tt.query)
				}
				if tt.check != nil {
					tt.check(t, res)
				}
			})
		}
	}
}

func TestInfraToolsRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"backup node not allowlisted", ToolBackupList, map[string]any{"node": "pve3", "storage": "local"}, []string{"not on the node allowlist", "no action was taken"}},
		{"storage node not allowlisted", ToolStorageList, map[string]any{"node": "pve3"}, []string{"not on the node allowlist"}},
		{"storage traversal", ToolBackupList, map[string]any{"node": "pve1", "storage": "local/../x"}, []string{"storage"}},
		{"storage missing", ToolBackupList, map[string]any{"node": "pve1"}, []string{"storage"}},
		{"vmid too small", ToolBackupList, map[string]any{"node": "pve1", "storage": "local", "vmid": 5}, []string{"vmid"}},
		{"limit too large", ToolStorageList, map[string]any{"limit": 5000}, []string{"limit"}},
		{"extra argument", ToolCephStatus, map[string]any{"node": "pve1"}, []string{"node"}},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{})
				wantError(t, f.call(t, t.Context(), tt.tool, tt.args), tt.want...)
				if n := len(f.fake.Requests()); n != 0 {
					t.Errorf("%d upstream requests, want none: %v", n, requestLines(f.fake.Requests()))
				}
			})
		}
	}
}
