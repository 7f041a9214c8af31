package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestReadToolsHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		requests  []string // the exact upstream requests
		unordered bool     // requests sent at once, in any order
		wantText  []string
		checkJSON func(t *testing.T, res *mcp.CallToolResult)
	}{
		{
			name:      "cluster_status",
			tool:      ToolClusterStatus,
			requests:  []string{"GET /cluster/resources", "GET /cluster/status", "GET /version"},
			unordered: true,
			wantText:  []string{"Cluster demo: 3 nodes (3 online), quorate, PVE 9.1.1"},
			checkJSON: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.ClusterStatusResult
				structured(t, res, &out)
				if out.Name != "demo" || !out.Clustered || !out.Quorate || out.Version != "9.1.1" || len(out.Nodes) != 3 {
					t.Errorf("cluster status = %+v", out)
				}
				if out.Nodes[0].Name != "pve1" || !out.Nodes[0].Online {
					t.Errorf("first node = %+v", out.Nodes[0])
				}
			},
		},
		{
			name:     "node_status",
			tool:     ToolNodeStatus,
			args:     map[string]any{"node": "pve1"},
			requests: []string{"GET /nodes/pve1/status"},
			wantText: []string{"Node pve1: up 15d 0h", "of 32", "memory 28.0 GiB of 128.0 GiB"},
			checkJSON: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.NodeStatusResult
				structured(t, res, &out)
				if out.Node != "pve1" || out.CPUs != 32 || out.Memory.Total != 128<<30 || out.Kernel != "6.17.2-1-pve" {
					t.Errorf("node status = %+v", out)
				}
			},
		},
		{
			name:     "list_guests all",
			tool:     ToolListGuests,
			requests: []string{"GET /cluster/resources"},
			wantText: []string{"Listed 13 of 13 guests"},
			checkJSON: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.ListGuestsResult
				structured(t, res, &out)
				if out.Total != 13 || len(out.Guests) != 13 || out.NextCursor != "" {
					t.Fatalf("total %d, %d guests, cursor %q", out.Total, len(out.Guests), out.NextCursor)
				}
				g := out.Guests[0]
				if g.VMID != 100 || g.Name != "web-01" || g.Node != "pve1" || g.Type != "qemu" || g.Status != "running" ||
					g.Template || g.Lock != "" || !slices.Equal(g.Tags, []string{"prod", "web"}) || !g.Manageable {
					t.Errorf("guest 100 = %+v", g)
				}
				byID := map[int]proxmoxsafe.Guest{}
				for _, g := range out.Guests {
					byID[g.VMID] = g
				}
				if byID[101].HAState == "" || byID[102].Lock != "backup" || !byID[105].Template {
					t.Errorf("HA/lock/template not reported: 101=%+v 102=%+v 105=%+v", byID[101], byID[102], byID[105])
				}
				// pve3 is not allowlisted and 201 is protected.
				if byID[106].Manageable || byID[201].Manageable || !byID[200].Manageable {
					t.Errorf("manageable wrong: 106=%v 201=%v 200=%v", byID[106].Manageable, byID[201].Manageable, byID[200].Manageable)
				}
				// Every documented field is present in the raw JSON.
				var raw struct {
					Guests []map[string]any `json:"guests"`
				}
				structured(t, res, &raw)
				for _, k := range []string{"vmid", "name", "node", "type", "status", "template", "tags", "manageable"} {
					if _, ok := raw.Guests[0][k]; !ok {
						t.Errorf("guest JSON lacks %q: %v", k, raw.Guests[0])
					}
				}
			},
		},
		{
			name:     "list_guests filtered",
			tool:     ToolListGuests,
			args:     map[string]any{"type": "lxc", "status": "running", "tag": "INFRA"},
			requests: []string{"GET /cluster/resources"},
			wantText: []string{"Listed 2 of 2 guests"},
			checkJSON: func(t *testing.T, res *mcp.CallToolResult) {
				var out proxmoxsafe.ListGuestsResult
				structured(t, res, &out)
				var ids []int
				for _, g := range out.Guests {
					ids = append(ids, g.VMID)
				}
				if !slices.Equal(ids, []int{200, 201}) {
					t.Errorf("vmids = %v, want [200 201]", ids)
				}
			},
		},
		{
			name:     "list_guests by node and name",
			tool:     ToolListGuests,
			args:     map[string]any{"node": "pve1", "name": "WEB"},
			requests: []string{"GET /cluster/resources"},
			wantText: []string{"Listed 2 of 2 guests"},
		},
		{
			name:     "list_guests nothing",
			tool:     ToolListGuests,
			args:     map[string]any{"name": "no-such-guest"},
			requests: []string{"GET /cluster/resources"},
			wantText: []string{"No guests matched"},
		},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{})
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
				got := requestLines(f.fake.Requests())
				if tt.unordered {
					slices.Sort(got)
				}
				if !slices.Equal(got, tt.requests) {
					t.Errorf("upstream requests = %v, want %v", got, tt.requests)
				}
				if tt.tool == ToolListGuests {
					if q := f.fake.Requests()[0].Query.Get("type"); q != "vm" {
						t.Errorf("/cluster/resources type = %q, want vm", q)
					}
				}
				if tt.checkJSON != nil {
					tt.checkJSON(t, res)
				}
			})
		}
	}
}

func TestMutationHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		post     string // the one mutating request
		form     map[string]string
		wantText []string
		action   string
		target   proxmoxsafe.Target
	}{
		{
			name:     "shutdown qemu",
			tool:     ToolGuestPower,
			args:     map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown", "approval": "APPROVE shutdown pve1/qemu/100"},
			post:     "POST /nodes/pve1/qemu/100/status/shutdown",
			wantText: []string{"Submitted shutdown of VM 100 (web-01) on pve1: task UPID:pve1:"},
			action:   "shutdown",
			target:   proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100},
		},
		{
			name:     "start stopped qemu",
			tool:     ToolGuestPower,
			args:     map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "action": "start", "approval": "APPROVE start pve2/qemu/103"},
			post:     "POST /nodes/pve2/qemu/103/status/start",
			wantText: []string{"Submitted start of VM 103 (build-runner) on pve2"},
			action:   "start",
			target:   proxmoxsafe.Target{Node: "pve2", Type: "qemu", VMID: 103},
		},
		{
			name:     "stop HA-managed qemu",
			tool:     ToolGuestPower,
			args:     map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": "stop", "approval": "APPROVE stop pve1/qemu/101"},
			post:     "POST /nodes/pve1/qemu/101/status/stop",
			wantText: []string{"Submitted stop of VM 101 (web-02) on pve1", "Note: ", "HA"},
			action:   "stop",
			target:   proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101},
		},
		{
			name:     "reboot lxc",
			tool:     ToolGuestPower,
			args:     map[string]any{"node": "pve1", "type": "lxc", "vmid": 200, "action": "reboot", "approval": "APPROVE reboot pve1/lxc/200"},
			post:     "POST /nodes/pve1/lxc/200/status/reboot",
			wantText: []string{"Submitted reboot of container 200 (dns-01) on pve1"},
			action:   "reboot",
			target:   proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200},
		},
		{
			name: "snapshot qemu with memory",
			tool: ToolSnapshotGuest,
			args: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "before-test",
				"description": "taken by a test", "vmstate": true, "approval": "APPROVE snapshot pve1/qemu/100/before-test vmstate=1"},
			post:     "POST /nodes/pve1/qemu/100/snapshot",
			form:     map[string]string{"snapname": "before-test", "description": "taken by a test", "vmstate": "1"},
			wantText: []string{"Submitted snapshot before-test of VM 100 (web-01) on pve1: task UPID:pve1:"},
			action:   "snapshot",
			target:   proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100, Snapshot: "before-test"},
		},
		{
			name:     "snapshot lxc",
			tool:     ToolSnapshotGuest,
			args:     map[string]any{"node": "pve2", "type": "lxc", "vmid": 204, "snapname": "s1", "approval": "APPROVE snapshot pve2/lxc/204/s1"},
			post:     "POST /nodes/pve2/lxc/204/snapshot",
			form:     map[string]string{"snapname": "s1"},
			wantText: []string{"Submitted snapshot s1 of container 204 (mail) on pve2"},
			action:   "snapshot",
			target:   proxmoxsafe.Target{Node: "pve2", Type: "lxc", VMID: 204, Snapshot: "s1"},
		},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{})
				res := f.call(t, t.Context(), tt.tool, tt.args)
				var r proxmoxsafe.Receipt
				structured(t, res, &r)
				msg := text(t, res)
				for _, w := range tt.wantText {
					if !strings.Contains(msg, w) {
						t.Errorf("text %q does not contain %q", msg, w)
					}
				}
				if !strings.HasPrefix(r.UPID, "UPID:"+tt.target.Node+":") || !strings.Contains(msg, r.UPID) {
					t.Errorf("upid %q (text %q)", r.UPID, msg)
				}
				if r.Action != tt.action || r.Target != tt.target {
					t.Errorf("receipt action %q target %+v, want %q %+v", r.Action, r.Target, tt.action, tt.target)
				}
				muts := f.fake.MutatingRequests()
				if len(muts) != 1 || requestLine(muts[0]) != tt.post {
					t.Fatalf("mutating requests = %v, want [%s]", requestLines(muts), tt.post)
				}
				for k, v := range tt.form {
					if got := muts[0].Form.Get(k); got != v {
						t.Errorf("form %s = %q, want %q", k, got, v)
					}
				}
				if _, ok := muts[0].Form["approval"]; ok {
					t.Error("the approval phrase was sent to Proxmox")
				}
				var events []proxmoxsafe.AuditEvent
				for _, rec := range f.audit.records(t) {
					events = append(events, rec.Event)
				}
				if !slices.Equal(events, []proxmoxsafe.AuditEvent{proxmoxsafe.AuditApproved, proxmoxsafe.AuditSubmitted}) {
					t.Errorf("audit events = %v", events)
				}
			})
		}
	}
}

func TestApprovalRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		phrase string
		state  []string // fragments of the state and effect
		post   string
	}{
		{
			name:   "shutdown",
			tool:   ToolGuestPower,
			args:   map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"},
			phrase: "APPROVE shutdown pve1/qemu/100",
			state:  []string{"status running", "lock none", "not HA-managed", "shut down cleanly", "VM 100 (web-01) on pve1"},
			post:   "POST /nodes/pve1/qemu/100/status/shutdown",
		},
		{
			name:   "stop HA-managed",
			tool:   ToolGuestPower,
			args:   map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": "stop"},
			phrase: "APPROVE stop pve1/qemu/101",
			state:  []string{"status running", "HA-managed (HA state started)", "cut the power", "HA manager"},
			post:   "POST /nodes/pve1/qemu/101/status/stop",
		},
		{
			name:   "snapshot",
			tool:   ToolSnapshotGuest,
			args:   map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "snapname": "pre-ci"},
			phrase: "APPROVE snapshot pve2/qemu/103/pre-ci",
			state:  []string{"status stopped", "lock none", "take snapshot pre-ci of VM 103 (build-runner) on pve2"},
			post:   "POST /nodes/pve2/qemu/103/snapshot",
		},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				f := newFixture(t, ctx, pv, fixtureConfig{})

				// 1. No approval: the refusal says what to approve.
				res := f.call(t, ctx, tt.tool, tt.args)
				msg := wantError(t, res, append([]string{"no action was taken", "exactly:\n" + tt.phrase}, tt.state...)...)
				// The phrase ends the words, on its own line; the last line is
				// the same refusal as JSON (content.go).
				words, tail, _ := strings.Cut(msg, "\n{")
				if !strings.HasSuffix(words, "\n"+tt.phrase) {
					t.Errorf("the phrase is not on its own line at the end of the words: %q", msg)
				}
				var refusal struct {
					Error struct {
						Kind           string `json:"kind"`
						ActionTaken    string `json:"action_taken"`
						ApprovalPhrase string `json:"approval_phrase"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte("{"+tail), &refusal); err != nil || refusal.Error.Kind != "approval_required" ||
					refusal.Error.ApprovalPhrase != tt.phrase || refusal.Error.ActionTaken != "none" {
					t.Errorf("machine-readable refusal %+v (%v) in %q", refusal, err, msg)
				}
				if res.StructuredContent != nil {
					t.Errorf("refusal carries structuredContent: %v", res.StructuredContent)
				}

				// 2. A wrong phrase: refused too, and the wrong text is not echoed.
				wrong := maps(tt.args, "approval", "APPROVE everything please")
				res = f.call(t, ctx, tt.tool, wrong)
				msg = wantError(t, res, "does not match", tt.phrase)
				if strings.Contains(msg, "everything please") {
					t.Errorf("refusal echoes the given approval text: %q", msg)
				}
				if n := len(f.fake.MutatingRequests()); n != 0 {
					t.Fatalf("refusals sent %d mutating requests", n)
				}

				// 3. The exact phrase: submitted.
				res = f.call(t, ctx, tt.tool, maps(tt.args, "approval", tt.phrase))
				var r proxmoxsafe.Receipt
				structured(t, res, &r)
				if !strings.HasPrefix(r.UPID, "UPID:") {
					t.Errorf("upid = %q", r.UPID)
				}
				if got := requestLines(f.fake.MutatingRequests()); !slices.Equal(got, []string{tt.post}) {
					t.Errorf("mutating requests = %v, want [%s]", got, tt.post)
				}
			})
		}
	}
}

// maps returns a copy of m with k set to v.
func maps(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	power := func(node, typ string, vmid int, action string) map[string]any {
		return map[string]any{"node": node, "type": typ, "vmid": vmid, "action": action,
			"approval": fmt.Sprintf("APPROVE %s %s/%s/%d", action, node, typ, vmid)}
	}
	snap := func(node, typ string, vmid int, name string) map[string]any {
		return map[string]any{"node": node, "type": typ, "vmid": vmid, "snapname": name,
			"approval": fmt.Sprintf("APPROVE snapshot %s/%s/%d/%s", node, typ, vmid, name)}
	}
	tests := []struct {
		name string
		tool string
		args any
		// schemaInvalid: refused before the handler: no request at all.
		schemaInvalid bool
		// noRequests: refused by the library before any I/O.
		noRequests bool
		want       []string
	}{
		// Schema: rejected by go-sdk against our input schema.
		{name: "vmid too small", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "vmid", 5), schemaInvalid: true, want: []string{"vmid: must be a VMID from 100", `"field":"vmid"`}},
		{name: "vmid too large", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "vmid", 1000000000), schemaInvalid: true, want: []string{"vmid: must be a VMID from 100 to 999999999", `"field":"vmid"`}},
		{name: "vmid as string", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "vmid", "100"), schemaInvalid: true, want: []string{"vmid"}},
		{name: "vmid fractional", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "vmid", 100.5), schemaInvalid: true, want: []string{"vmid"}},
		{name: "node path traversal", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "node", "../x"), schemaInvalid: true, want: []string{"node: must be a Proxmox node name", `"field":"node"`}},
		{name: "node with slash", tool: ToolNodeStatus, args: map[string]any{"node": "pve1/../../access"}, schemaInvalid: true, want: []string{"node"}},
		{name: "node missing", tool: ToolNodeStatus, args: map[string]any{}, schemaInvalid: true, want: []string{"node"}},
		{name: "extra property", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "skiplock", 1), schemaInvalid: true, want: []string{"skiplock"}},
		{name: "unknown action", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "action", "reset"), schemaInvalid: true, want: []string{"action"}},
		{name: "unknown type", tool: ToolGuestPower, args: maps(power("pve1", "qemu", 100, "stop"), "type", "vm"), schemaInvalid: true, want: []string{"type"}},
		{name: "bad snapname", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "1st"), schemaInvalid: true, want: []string{"snapname"}},
		{name: "snapname with slash", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "a/../b"), schemaInvalid: true, want: []string{"snapname"}},
		{name: "snapname current", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "current"), schemaInvalid: true, want: []string{"snapname"}},
		{name: "snapname CURRENT", tool: ToolSnapshotGuest, args: snap("pve1", "lxc", 200, "CURRENT"), schemaInvalid: true, want: []string{"snapname"}},
		{name: "snapname too long", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "a"+strings.Repeat("b", 40)), schemaInvalid: true, want: []string{"snapname"}},
		{name: "description too long", tool: ToolSnapshotGuest, args: maps(snap("pve1", "qemu", 100, "s1"), "description", strings.Repeat("x", 1025)), schemaInvalid: true, want: []string{"description"}},
		{name: "limit too large", tool: ToolListGuests, args: map[string]any{"limit": 5000}, schemaInvalid: true, want: []string{"limit"}},
		{name: "negative limit", tool: ToolListGuests, args: map[string]any{"limit": -1}, schemaInvalid: true, want: []string{"limit"}},
		{name: "bad status filter", tool: ToolListGuests, args: map[string]any{"status": "paused"}, schemaInvalid: true, want: []string{"status"}},
		{name: "arguments not an object", tool: ToolListGuests, args: []any{1, 2}, schemaInvalid: true},

		// Library validation (what the schema cannot say): no I/O either.
		{name: "snapname pending on qemu", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "pending"), noRequests: true, want: []string{"invalid input", "snapname", "reserves"}},
		{name: "snapname vzdump on lxc", tool: ToolSnapshotGuest, args: snap("pve1", "lxc", 200, "vzdump"), noRequests: true, want: []string{"snapname", "reserves"}},
		{name: "vmstate on lxc", tool: ToolSnapshotGuest, args: maps(snap("pve1", "lxc", 200, "s1"), "vmstate", true), noRequests: true, want: []string{"vmstate", "qemu"}},
		{name: "description with control characters", tool: ToolSnapshotGuest, args: maps(snap("pve1", "qemu", 100, "s1"), "description", "a\x1b[31mb"), noRequests: true, want: []string{"description"}},
		{name: "bad cursor", tool: ToolListGuests, args: map[string]any{"cursor": "not-a-cursor"}, noRequests: true, want: []string{"cursor"}},

		// Policy: no I/O.
		{name: "node not allowlisted", tool: ToolGuestPower, args: power("pve3", "qemu", 106, "stop"), noRequests: true, want: []string{"not allowed", "pve3", "allowlist"}},
		{name: "node_status not allowlisted", tool: ToolNodeStatus, args: map[string]any{"node": "pve3"}, noRequests: true, want: []string{"pve3", "allowlist"}},
		{name: "protected guest", tool: ToolSnapshotGuest, args: snap("pve2", "lxc", 201, "s1"), noRequests: true, want: []string{"201", "protected"}},

		// Preconditions: read the state, send nothing mutating.
		{name: "locked guest", tool: ToolGuestPower, args: power("pve1", "qemu", 102, "stop"), want: []string{"precondition", "locked (backup)"}},
		{name: "template start", tool: ToolGuestPower, args: power("pve2", "qemu", 105, "start"), want: []string{"template"}},
		{name: "already running", tool: ToolGuestPower, args: power("pve1", "qemu", 100, "start"), want: []string{"already running"}},
		{name: "already stopped", tool: ToolGuestPower, args: power("pve2", "qemu", 103, "shutdown"), want: []string{"already stopped"}},
		{name: "paused shutdown", tool: ToolGuestPower, args: power("pve2", "qemu", 104, "shutdown"), want: []string{"paused"}},
		{name: "snapshot template", tool: ToolSnapshotGuest, args: snap("pve2", "qemu", 105, "s1"), want: []string{"template"}},
		{name: "snapshot exists", tool: ToolSnapshotGuest, args: snap("pve1", "qemu", 100, "pre-upgrade"), want: []string{"already has a snapshot named pre-upgrade"}},
		{name: "wrong node for guest", tool: ToolGuestPower, args: power("pve2", "qemu", 100, "stop"), want: []string{"not found", "no action was taken"}},
		{name: "no such guest", tool: ToolGuestPower, args: power("pve1", "qemu", 999, "stop"), want: []string{"not found", "no action was taken"}},
		{name: "wrong type for guest", tool: ToolGuestPower, args: power("pve1", "lxc", 100, "stop"), want: []string{"not found", "no action was taken"}},
		{name: "snapshot of missing guest", tool: ToolSnapshotGuest, args: snap("pve1", "lxc", 777, "s1"), want: []string{"not found", "no action was taken"}},
	}
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			for _, tt := range tests {
				// Sequential on purpose: request counts are compared per call.
				t.Run(tt.name, func(t *testing.T) {
					before := len(f.fake.Requests())
					res := f.call(t, ctx, tt.tool, tt.args)
					msg := wantError(t, res, tt.want...)
					if !strings.Contains(msg, "no action was taken") {
						t.Errorf("refusal does not say that nothing was done: %q", msg)
					}
					if tt.schemaInvalid && !strings.HasPrefix(msg, "invalid input: ") {
						t.Errorf("schema refusal text = %q", msg)
					}
					if !sanitize.Clean(msg) {
						t.Errorf("refusal text is not clean: %q", msg)
					}
					sent := f.fake.Requests()[before:]
					if (tt.schemaInvalid || tt.noRequests) && len(sent) != 0 {
						t.Errorf("refused input sent %d requests: %v", len(sent), requestLines(sent))
					}
				})
			}
			if muts := f.fake.MutatingRequests(); len(muts) != 0 {
				t.Errorf("refusals sent mutating requests: %v", requestLines(muts))
			}
			// Every refused mutation call leaves exactly one "refused"
			// record, including those go-sdk refused against the schema.
			wantRefused := 0
			for _, tt := range tests {
				if tt.tool == ToolGuestPower || tt.tool == ToolSnapshotGuest {
					wantRefused++
				}
			}
			recs := f.audit.records(t)
			for _, rec := range recs {
				if rec.Event != proxmoxsafe.AuditRefused {
					t.Errorf("audit record %+v for a refused call", rec)
				}
			}
			if len(recs) != wantRefused {
				t.Errorf("audit has %d refused records, want %d (one per refused mutation call)", len(recs), wantRefused)
			}
		})
	}
}

func TestCanarySecretNeverLeaks(t *testing.T) {
	t.Parallel()
	const canary = "c4n4ry-5ecret-d0-n0t-leak-7f3a9e1b"
	for _, pv := range protocols {
		for _, wrongSecret := range []bool{false, true} {
			name := protoName(pv) + "/valid-token"
			if wrongSecret {
				name = protoName(pv) + "/rejected-token"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				cluster := proxmoxtest.DemoCluster()
				fakeSecret := canary
				if wrongSecret {
					// The client sends the canary; the fake expects another
					// secret and answers 401.
					fakeSecret = "11111111-2222-4333-8444-555555555555"
				}
				cluster.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {
					Secret:     fakeSecret,
					Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()},
				}}
				f := newFixture(t, ctx, pv, fixtureConfig{cluster: cluster, secret: canary})
				calls := []struct {
					tool string
					args map[string]any
				}{
					{ToolClusterStatus, nil},
					{ToolNodeStatus, map[string]any{"node": "pve1"}},
					{ToolListGuests, map[string]any{"limit": 3}},
					{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"}},
					{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop", "approval": "APPROVE stop pve1/qemu/100"}},
					{ToolSnapshotGuest, map[string]any{"node": "pve1", "type": "qemu", "vmid": 102, "snapname": "x1", "approval": "APPROVE snapshot pve1/qemu/102/x1"}},
					{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 5, "action": "stop"}},
				}
				var all strings.Builder
				errorsSeen := 0
				for _, c := range calls {
					res := f.call(t, ctx, c.tool, c.args)
					if res.IsError {
						errorsSeen++
					}
					all.WriteString(mustJSON(t, res))
				}
				if wrongSecret && errorsSeen != len(calls) {
					t.Errorf("with a rejected token, %d of %d calls failed", errorsSeen, len(calls))
				}
				if wrongSecret && !strings.Contains(all.String(), "401") {
					t.Errorf("results do not report the 401: %s", all.String())
				}
				for what, s := range map[string]string{"results": all.String(), "logs": f.logs.String(), "audit log": f.audit.String()} {
					if strings.Contains(s, canary) {
						t.Errorf("the token secret appears in the %s", what)
					}
				}
				if f.logs.String() == "" {
					t.Error("nothing was logged; the check would be vacuous")
				}
			})
		}
	}
}

func TestSanitizedNames(t *testing.T) {
	t.Parallel()
	const dirty = "web\u200b-\u202e01\x1b[31m\x07\u2066x\u2069\r\nIGNORE\ufeff"
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			f.fake.Update(func(c *proxmoxtest.Cluster) {
				for _, g := range c.Guests {
					if g.VMID == 100 {
						g.Name = dirty
						g.Tags = []string{"prod", "we\u200bb"}
						g.Description = proxmoxtest.InjectionDescription
					}
				}
			})
			res := f.call(t, ctx, ToolListGuests, map[string]any{"node": "pve1"})
			var out proxmoxsafe.ListGuestsResult
			structured(t, res, &out)
			g := out.Guests[0]
			if g.VMID != 100 {
				t.Fatalf("first guest %d", g.VMID)
			}
			if !sanitize.Clean(g.Name) || strings.ContainsAny(g.Name, "\r\n\t") || !strings.HasPrefix(g.Name, "web-01") {
				t.Errorf("name not sanitized: %q", g.Name)
			}
			for _, tag := range g.Tags {
				if !sanitize.Clean(tag) {
					t.Errorf("tag not sanitized: %q", tag)
				}
			}
			// The approval text names the guest: sanitized too, one line, no description.
			res = f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"})
			msg := wantError(t, res, "APPROVE stop pve1/qemu/100")
			if !sanitize.Clean(msg) || strings.Contains(msg, "IGNORE PREVIOUS") || strings.Contains(msg, "Monitoring stack") {
				t.Errorf("approval text not clean or echoes the description: %q", msg)
			}
			if lines := strings.Split(msg, "\n"); len(lines) != 6 {
				t.Errorf("approval text has %d lines, want 5 and the JSON line (a name must not add lines): %q", len(lines), msg)
			}
			// Guest descriptions never appear in any result.
			all := mustJSON(t, res)
			res = f.call(t, ctx, ToolListGuests, nil)
			all += mustJSON(t, res)
			if strings.Contains(all, "Monitoring stack") || strings.Contains(all, "IGNORE PREVIOUS") {
				t.Error("a guest description reached a result")
			}
		})
	}
}

func TestToolsFollowPolicy(t *testing.T) {
	t.Parallel()
	// Every read tool without a class is always listed, in listing order;
	// the class tools follow the policy; read-only mode keeps exactly the
	// tools annotated read-only (api_get).
	var reads []string
	for _, ti := range Tools(nil, nil) {
		if ti.ReadOnly() && ti.Class == "" {
			reads = append(reads, ti.Name)
		}
	}
	all := append(slices.Clone(reads), ToolGuestPower, ToolSnapshotGuest)
	gateway := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
	tests := []struct {
		name     string
		policy   proxmoxsafe.Policy
		readOnly bool
		want     []string
	}{
		{name: "power and snapshot", policy: defaultPolicy(), want: all},
		{name: "snapshot only", policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot}}, want: append(slices.Clone(reads), ToolSnapshotGuest)},
		{name: "power only", policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}}, want: append(slices.Clone(reads), ToolGuestPower)},
		{name: "no classes", policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}}, want: reads},
		{name: "library read-only", policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, ReadOnly: true, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}}, want: reads},
		{name: "options read-only", policy: defaultPolicy(), readOnly: true, want: reads},
		{name: "gateway", policy: gateway, want: append(slices.Clone(reads), ToolGuestPower, ToolAPIGet, ToolAPIRequest)},
		{name: "gateway, options read-only", policy: gateway, readOnly: true, want: append(slices.Clone(reads), ToolAPIGet)},
		{name: "gateway, library read-only", policy: func() proxmoxsafe.Policy { p := gateway; p.ReadOnly = true; return p }(), want: append(slices.Clone(reads), ToolAPIGet)},
		{name: "gateway reads without nodes", policy: proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGateway}}, want: append(slices.Clone(reads), ToolAPIGet)},
	}
	for _, pv := range protocols {
		for _, tt := range tests {
			t.Run(protoName(pv)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, fixtureConfig{policy: &tt.policy, opts: Options{ReadOnly: tt.readOnly}})
				var got []string
				for tool, err := range f.cs.Tools(t.Context(), nil) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, tool.Name)
				}
				if !slices.Equal(got, sortedCopy(tt.want)) && !slices.Equal(got, tt.want) {
					t.Errorf("listed tools = %v, want %v", got, tt.want)
				}
				var infos []string
				for _, ti := range Tools(f.client, &Options{ReadOnly: tt.readOnly}) {
					infos = append(infos, ti.Name)
				}
				if !slices.Equal(infos, tt.want) {
					t.Errorf("Tools() = %v, want %v", infos, tt.want)
				}
			})
		}
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func TestReadOnlyRefusesMutations(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{opts: Options{ReadOnly: true}})
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop", "approval": "APPROVE stop pve1/qemu/100"}},
				{ToolSnapshotGuest, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "s1", "approval": "APPROVE snapshot pve1/qemu/100/s1"}},
			} {
				_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				var werr *jsonrpc.Error
				if err == nil || !errors.As(err, &werr) || !strings.Contains(err.Error(), "unknown tool") {
					t.Errorf("%s in read-only mode: err = %v, want go-sdk's unknown tool error", tc.tool, err)
				}
			}
			res := f.call(t, ctx, ToolListGuests, nil)
			var out proxmoxsafe.ListGuestsResult
			structured(t, res, &out)
			for _, g := range out.Guests {
				if g.Manageable {
					t.Errorf("guest %d is manageable through a read-only server", g.VMID)
				}
			}
			if muts := f.fake.MutatingRequests(); len(muts) != 0 {
				t.Errorf("mutating requests in read-only mode: %v", requestLines(muts))
			}
		})
	}
}
