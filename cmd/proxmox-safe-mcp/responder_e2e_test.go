package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// responderE2ECluster: one guest per guard the end-to-end test meets, and
// one with a snapshot history to prune.
func responderE2ECluster() *proxmoxtest.Cluster {
	now := time.Now().Unix()
	h := int64(3600)
	c := &proxmoxtest.Cluster{
		Name:  "lab",
		Nodes: []*proxmoxtest.Node{{Name: "pve1", Online: true, CPUs: 8, MaxMem: 64 << 30}},
		Guests: []*proxmoxtest.Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web1", Status: "running", Uptime: 7200, AgentEnabled: true},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "db.example.com", Status: "running", Uptime: 7200, AgentEnabled: true, AgentHung: true},
			{VMID: 102, Node: "pve1", Type: "lxc", Name: "cache", Status: "running", Uptime: 7200, Tags: []string{"critical"}},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "fresh", Status: "running", Uptime: 60},
			{VMID: 104, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Uptime: 7200},
			{VMID: 105, Node: "pve1", Type: "qemu", Name: "hung", Status: "running", Uptime: 7200, AgentEnabled: true, AgentHung: true},
			{VMID: 106, Node: "pve1", Type: "qemu", Name: "snaps", Status: "running", Uptime: 7200, Snapshots: []*proxmoxtest.Snapshot{
				{Name: "keep-golden", SnapTime: now - 900*h},
				{Name: "old1", Parent: "keep-golden", SnapTime: now - 50*h},
				{Name: "old2", Parent: "old1", SnapTime: now - 30*h},
				{Name: "auto1", Parent: "old2", Description: "cv4pve-autosnap", SnapTime: now - 5*h},
				{Name: "manual1", Parent: "auto1", SnapTime: now - 4*h},
				{Name: "auto2", Parent: "manual1", Description: "cv4pve-autosnap", SnapTime: now - 3*h},
			}},
		},
	}
	return c
}

// TestResponderProfileEndToEnd drives the built binary configured the way
// an existing responder deployment is: MCP_PROXMOX_PROFILE=claptrap and the
// other MCP_PROXMOX_* names, PVE_BASE_URL and PVE_VERIFY_SSL (aliases),
// and the token. PVE_ALLOWED_NODES is ours: the node allowlist has no
// equivalent there, and without it no mutation tool is offered.
func TestResponderProfileEndToEnd(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewUnstartedServer(responderE2ECluster())
	srv.TaskPolls = 2
	srv.AgentTimeout = time.Millisecond
	srv.StartTLS()
	t.Cleanup(srv.Close)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	env := cleanEnv(
		"PVE_BASE_URL="+srv.URL,
		"PVE_API_TOKEN_ID="+proxmoxtest.DefaultTokenID,
		"PVE_API_TOKEN_SECRET="+proxmoxtest.DefaultTokenSecret,
		"PVE_VERIFY_SSL=false",
		"PVE_ALLOWED_NODES=pve1",
		"MCP_PROXMOX_PROFILE=claptrap",
		"MCP_PROXMOX_PROTECTED=db,tag:critical",
		"MCP_PROXMOX_MIN_UPTIME=1h",
		"MCP_PROXMOX_SNAPSHOT_MAX_AGE=24h",
		"MCP_PROXMOX_SNAPSHOT_MAX_COUNT=3",
		"MCP_PROXMOX_AUTOSNAP_MARKER=cv4pve-autosnap",
		"MCP_PROXMOX_AUDIT_LOG="+audit,
	)
	p := startProc(t, "", env)
	ctx := t.Context()

	// The tools: every read tool and exactly the responder's four writes.
	var got []string
	for tool, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tool.Name)
	}
	var want []string
	for _, ti := range mcpserver.Tools(nil, nil) {
		if ti.ReadOnly() && ti.Class == "" { // api_get has the gateway class
			want = append(want, ti.Name)
		}
	}
	want = append(want, mcpserver.ToolVMStart, mcpserver.ToolVMReboot, mcpserver.ToolVMReset, mcpserver.ToolSnapshotCleanup)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("tools = %v\nwant   %v", got, want)
	}

	// Every guard refuses with zero mutating requests (the agent ping of a
	// reset, which changes nothing, is the one POST a reset check sends).
	refusals := []struct {
		name, tool string
		args       map[string]any
		mention    string
		ping       bool
	}{
		{"protected by short name", mcpserver.ToolVMReboot, guest(101, "qemu"), `"db.example.com" matches the protected name "db"`, false},
		{"protected by tag", mcpserver.ToolSnapshotCleanup, mergeArgs(guest(102, "lxc"), map[string]any{"apply": true}), `protected tag "critical"`, false},
		{"reboot under min uptime", mcpserver.ToolVMReboot, guest(103, "qemu"), "less than the minimum uptime 1h before", false},
		{"reset with a live agent", mcpserver.ToolVMReset, guest(100, "qemu"), "answers a ping", true},
		{"reset of an LXC", mcpserver.ToolVMReset, guest(104, "lxc"), "qemu", false},
		{"start of a running guest", mcpserver.ToolVMStart, guest(100, "qemu"), "already running", false},
	}
	for _, r := range refusals {
		srv.ResetRequests()
		res := call(t, p.cs, r.tool, r.args)
		if !res.IsError || !strings.Contains(textOf(res), r.mention) {
			t.Errorf("%s: isError %v, text %q; want a refusal mentioning %q", r.name, res.IsError, textOf(res), r.mention)
		}
		var wantNonGET []string
		if r.ping {
			wantNonGET = []string{"POST /nodes/pve1/qemu/100/agent/ping"}
		}
		if m := lines(srv.MutatingRequests()); !slices.Equal(m, wantNonGET) {
			t.Errorf("%s: non-GET requests %v, want %v", r.name, m, wantNonGET)
		}
	}

	// A dry run sends no mutating request and returns the exact plan.
	srv.ResetRequests()
	res := call(t, p.cs, mcpserver.ToolSnapshotCleanup, guest(106, "qemu"))
	if res.IsError {
		t.Fatalf("dry run: %s", textOf(res))
	}
	if m := srv.MutatingRequests(); len(m) != 0 {
		t.Errorf("dry run sent %v", lines(m))
	}
	plan := stepNames(t, res)
	wantPlan := []string{"old1:max-age:planned", "old2:max-age:planned", "manual1:max-count:planned"}
	if !slices.Equal(plan, wantPlan) {
		t.Errorf("dry-run steps = %v, want %v", plan, wantPlan)
	}

	// apply: one deletion at a time, each after the previous task stopped.
	srv.ResetRequests()
	res = call(t, p.cs, mcpserver.ToolSnapshotCleanup, mergeArgs(guest(106, "qemu"), map[string]any{"apply": true}))
	if res.IsError {
		t.Fatalf("apply: %s", textOf(res))
	}
	if s := stepNames(t, res); !slices.Equal(s, []string{"old1:max-age:deleted", "old2:max-age:deleted", "manual1:max-count:deleted"}) {
		t.Errorf("applied steps = %v", s)
	}
	reqs := srv.Requests()
	tasks := srv.Tasks()
	var deletes []string
	var delTasks []proxmoxtest.Task
	for _, tk := range tasks {
		if tk.Type == "qmdelsnapshot" {
			delTasks = append(delTasks, tk)
		}
	}
	prevStoppedSeen := true
	for i, r := range reqs {
		if r.Method != "DELETE" {
			continue
		}
		if !prevStoppedSeen {
			t.Errorf("DELETE %s sent before the previous deletion's task was seen stopped", r.Path)
		}
		deletes = append(deletes, r.Path)
		// From here, the next DELETE may only follow a status read of
		// this deletion's task after it stopped (the fake answers
		// "running" TaskPolls times first).
		prevStoppedSeen = false
		upid := delTasks[len(deletes)-1].UPID
		polls := 0
		for _, q := range reqs[i+1:] {
			if q.Method == "DELETE" {
				break
			}
			if q.Method == "GET" && strings.Contains(q.Path, upid) && strings.HasSuffix(q.Path, "/status") {
				polls++
			}
		}
		prevStoppedSeen = polls > srv.TaskPolls
	}
	wantDeletes := []string{"/nodes/pve1/qemu/106/snapshot/old1", "/nodes/pve1/qemu/106/snapshot/old2", "/nodes/pve1/qemu/106/snapshot/manual1"}
	if !slices.Equal(deletes, wantDeletes) {
		t.Errorf("DELETEs = %v, want %v", deletes, wantDeletes)
	}
	for i := 1; i < len(delTasks); i++ {
		if delTasks[i-1].EndTime == 0 || delTasks[i].StartTime < delTasks[i-1].EndTime {
			t.Errorf("deletion task %d started (%d) before task %d ended (%d)", i, delTasks[i].StartTime, i-1, delTasks[i-1].EndTime)
		}
	}
	if m := srv.MutatingRequests(); len(m) != 3 {
		t.Errorf("apply sent %v, want exactly the three DELETEs", lines(m))
	}

	// A reset of a VM whose agent is gone goes through, without a phrase.
	res = call(t, p.cs, mcpserver.ToolVMReset, guest(105, "qemu"))
	if res.IsError {
		t.Errorf("reset of a hung VM: %s", textOf(res))
	}

	p.cs.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// The audit log: one "refused" record per refused call, and for every
	// request sent an "approved" record before it.
	recs := auditRecords(t, audit)
	var refused, approved []string
	for _, r := range recs {
		switch r.Event {
		case proxmoxsafe.AuditRefused:
			refused = append(refused, string(r.Op))
		case proxmoxsafe.AuditApproved:
			approved = append(approved, string(r.Op)+" "+r.Action+" "+r.Snapshot)
			if r.Approver != "none" {
				t.Errorf("approved by %q, want level none", r.Approver)
			}
		}
	}
	if len(refused) != len(refusals) {
		t.Errorf("refused records %v, want %d", refused, len(refusals))
	}
	wantApproved := []string{
		"CleanupSnapshots delsnapshot old1", "CleanupSnapshots delsnapshot old2", "CleanupSnapshots delsnapshot manual1",
		"ResetGuest reset ",
	}
	if !slices.Equal(approved, wantApproved) {
		t.Errorf("approved records %v, want %v", approved, wantApproved)
	}
}

func guest(vmid int, typ string) map[string]any {
	return map[string]any{"node": "pve1", "type": typ, "vmid": vmid}
}

func mergeArgs(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func lines(rs []proxmoxtest.Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// stepNames returns a cleanup result's steps as "name:rule:status".
func stepNames(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out proxmoxsafe.CleanupResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	var s []string
	for _, st := range out.Steps {
		s = append(s, st.Name+":"+string(st.Rule)+":"+string(st.Status))
	}
	return s
}

// auditRecords reads the audit log's records (the anchor left out).
func auditRecords(t *testing.T, path string) []proxmoxsafe.AuditRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []proxmoxsafe.AuditRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r proxmoxsafe.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Event != proxmoxsafe.AuditAnchor {
			out = append(out, r)
		}
	}
	return out
}
