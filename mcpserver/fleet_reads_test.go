package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// fleetCall calls tool on cs and decodes a successful result into T.
func fleetCall[T any](t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, T) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out T
	if !res.IsError {
		if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil {
			t.Fatal(err)
		}
	}
	return res, out
}

// newDownMember is a fleet member whose fake is closed: a cluster that
// does not answer.
func newDownMember(t *testing.T, name string) *fleetMember {
	t.Helper()
	m := newFleetMember(t, name, defaultPolicy())
	m.fake.Close()
	return m
}

// wantStatuses checks a fleet read's clusters: names in order, each
// reachable but those in down, which have an error.
func wantStatuses(t *testing.T, got []FleetReadStatus, names []string, down ...string) {
	t.Helper()
	if len(got) != len(names) {
		t.Fatalf("clusters %+v, want %v", got, names)
	}
	for i, st := range got {
		isDown := false
		for _, d := range down {
			isDown = isDown || d == st.Name
		}
		if st.Name != names[i] || st.Reachable == isDown || (st.Error != "") != isDown {
			t.Errorf("cluster %d: %+v (want %s, down %v)", i, st, names[i], isDown)
		}
	}
}

// TestFleetListGuests: list_guests over every cluster ("*") or a list, one
// cluster down: the others are listed, the down one reported inline;
// pages of 5 walk every guest of every reachable cluster exactly once, in
// cluster order then VMID; a bad cluster list is refused with nothing
// sent.
func TestFleetListGuests(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	down := newDownMember(t, "down")
	prod := newFleetMember(t, "prod", defaultPolicy())
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, down, prod), nil), "")
	list := func(args map[string]any) (*mcp.CallToolResult, FleetGuestsResult) {
		t.Helper()
		return fleetCall[FleetGuestsResult](t, cs, ToolListGuests, args)
	}
	one, labOnly := list(map[string]any{"cluster": []string{"lab"}})
	if one.IsError || len(labOnly.Clusters) != 1 || labOnly.Total == 0 || labOnly.Guests[0].Cluster != "lab" {
		t.Fatalf("lab alone: %s", text(t, one))
	}
	perCluster := labOnly.Total

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"cluster": "*", "limit": 5}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, out := list(args)
		if res.IsError {
			t.Fatalf("page %d: %s", page, text(t, res))
		}
		wantStatuses(t, out.Clusters, []string{"lab", "down", "prod"}, "down")
		if out.Total != 2*perCluster {
			t.Fatalf("page %d: total %d, clusters %+v", page, out.Total, out.Clusters)
		}
		if !strings.Contains(text(t, res), "on 2 clusters; 1 unreachable: down") {
			t.Errorf("page %d: %s", page, text(t, res))
		}
		if len(out.Guests) > 5 {
			t.Fatalf("page %d has %d guests, limit 5", page, len(out.Guests))
		}
		for _, g := range out.Guests {
			seen = append(seen, fmt.Sprintf("%s/%d", g.Cluster, g.VMID))
		}
		cursor = out.NextCursor
		if cursor == "" {
			break
		}
		if page > 20 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 2*perCluster {
		t.Fatalf("walked %d guests, want %d: %v", len(seen), 2*perCluster, seen)
	}
	for i, s := range seen {
		want := "lab/"
		if i >= perCluster {
			want = "prod/"
		}
		if s[:len(want)] != want || (i > 0 && i != perCluster && s <= seen[i-1] && len(s) == len(seen[i-1])) {
			t.Errorf("guest %d is %s (after %v)", i, s, seen[max(0, i-1)])
		}
	}
}

// TestFleetReadRefusals: for every fleet read, a cluster list with an
// unknown or repeated name, an empty list, another word than "*", a node
// (one cluster's) with several clusters, and a cursor that is not one of
// these clusters' are refused with no request to any cluster.
func TestFleetReadRefusals(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	prod := newFleetMember(t, "prod", defaultPolicy())
	other := newFleetMember(t, "other", defaultPolicy())
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, prod, other), nil), "")
	// A cursor of a page over other alone, a cluster the calls below do
	// not select.
	_, page := fleetCall[FleetGuestsResult](t, cs, ToolListGuests, map[string]any{"cluster": []string{"other"}, "limit": 1})
	if page.NextCursor == "" {
		t.Fatal("no cursor over other")
	}
	resetRequests(lab, prod, other)
	for tool := range fleetReads {
		for _, bad := range []any{[]string{"lab", "lab"}, []string{"dev"}, []string{"lab", "Prod"}, []string{}, "all", "", 3} {
			res, _ := fleetCall[any](t, cs, tool, map[string]any{"cluster": bad})
			wantError(t, res, "cluster", "no action was taken")
		}
		if tool == ToolHealthReport || tool == ToolStorageList {
			res, _ := fleetCall[any](t, cs, tool, map[string]any{"cluster": "*", "node": "pve1"})
			wantError(t, res, "node: is one cluster's", "nothing was read")
			res, _ = fleetCall[any](t, cs, tool, map[string]any{"cluster": []string{"lab", "prod"}, "node": "pve1"})
			wantError(t, res, "node: is one cluster's")
		}
		if tool == ToolListGuests || tool == ToolBackupCoverage {
			for _, c := range []string{page.NextCursor, "bm9wZQ", base64.RawURLEncoding.EncodeToString([]byte("f1:lab:99"))} {
				res, _ := fleetCall[any](t, cs, tool, map[string]any{"cluster": []string{"lab", "prod"}, "cursor": c})
				wantError(t, res, "cursor: is not a cursor returned by a previous call over these clusters")
			}
		}
	}
	for name, n := range requestCounts(lab, prod, other) {
		if n != 0 {
			t.Errorf("%d requests on %s after refused fleet reads", n, name)
		}
	}
}

// TestFleetHealthReport: health_report over three clusters, one down:
// the findings of both others, most severe first whichever cluster they
// are on (prod's node-offline, its only critical, before every warning of
// lab's), each naming its cluster; each cluster's counts are what it
// reports alone; the down one is reported inline; limit bounds the
// findings across clusters and keeps the most severe.
func TestFleetHealthReport(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	down := newDownMember(t, "down")
	prod := newFleetMember(t, "prod", defaultPolicy())
	prod.fake.SetNodeOnline("pve3", false)
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, down, prod), nil), "")

	alone := map[string]proxmoxsafe.HealthReportResult{}
	for _, m := range []*fleetMember{lab, prod} {
		res, out := fleetCall[proxmoxsafe.HealthReportResult](t, cs, ToolHealthReport, map[string]any{"cluster": m.name})
		if res.IsError {
			t.Fatalf("%s alone: %s", m.name, text(t, res))
		}
		alone[m.name] = out
	}
	if alone["prod"].Critical <= alone["lab"].Critical || alone["lab"].Warning == 0 {
		t.Fatalf("the fixture: lab %d critical %d warning, prod %d critical", alone["lab"].Critical, alone["lab"].Warning, alone["prod"].Critical)
	}

	res, out := fleetCall[FleetHealthResult](t, cs, ToolHealthReport, map[string]any{"cluster": "*"})
	if res.IsError {
		t.Fatal(text(t, res))
	}
	statuses := make([]FleetReadStatus, len(out.Clusters))
	for i, st := range out.Clusters {
		statuses[i] = st.FleetReadStatus
	}
	wantStatuses(t, statuses, []string{"lab", "down", "prod"}, "down")
	for _, st := range out.Clusters {
		if a, ok := alone[st.Name]; ok && (st.Total != a.Total || st.Critical != a.Critical || st.Warning != a.Warning || st.Info != a.Info) {
			t.Errorf("%s: %+v, alone %d/%d/%d/%d", st.Name, st, a.Total, a.Critical, a.Warning, a.Info)
		}
	}
	l, p := alone["lab"], alone["prod"]
	if out.Total != l.Total+p.Total || out.Critical != l.Critical+p.Critical || out.Warning != l.Warning+p.Warning || len(out.Findings) != out.Total {
		t.Errorf("totals %d/%d/%d, %d findings", out.Total, out.Critical, out.Warning, len(out.Findings))
	}
	rank := map[string]int{"critical": 0, "warning": 1, "info": 2}
	prodOffline, firstLabWarning := -1, -1
	for i, f := range out.Findings {
		if i > 0 && rank[f.Severity] < rank[out.Findings[i-1].Severity] {
			t.Errorf("finding %d (%s %s) after a %s one", i, f.Cluster, f.Severity, out.Findings[i-1].Severity)
		}
		if f.Cluster == "prod" && f.Kind == "node-offline" && f.Subject == "node pve3" {
			prodOffline = i
		}
		if f.Cluster == "lab" && f.Severity == proxmoxsafe.SeverityWarning && firstLabWarning < 0 {
			firstLabWarning = i
		}
		if f.Cluster != "lab" && f.Cluster != "prod" {
			t.Errorf("finding %d names cluster %q", i, f.Cluster)
		}
	}
	if prodOffline < 0 || firstLabWarning < 0 || prodOffline > firstLabWarning {
		t.Errorf("prod's node-offline at %d, lab's first warning at %d", prodOffline, firstLabWarning)
	}
	if txt := text(t, res); !strings.Contains(txt, "on 2 clusters; 1 unreachable: down") || !strings.Contains(txt, "first: [") {
		t.Errorf("text: %s", txt)
	}

	crit := l.Critical + p.Critical
	res, out = fleetCall[FleetHealthResult](t, cs, ToolHealthReport, map[string]any{"cluster": []string{"lab", "prod"}, "limit": crit})
	if res.IsError || len(out.Findings) != crit || out.Total != l.Total+p.Total {
		t.Fatalf("limit %d: %d findings of %d: %s", crit, len(out.Findings), out.Total, text(t, res))
	}
	for _, f := range out.Findings {
		if f.Severity != proxmoxsafe.SeverityCritical {
			t.Errorf("with limit %d (the criticals): %+v", crit, f)
		}
	}
	if !strings.Contains(text(t, res), fmt.Sprintf("(%d of %d shown)", crit, out.Total)) {
		t.Errorf("text: %s", text(t, res))
	}
}

// TestFleetStorageList: storage_list over three clusters, one down: the
// entries of both others, fullest first whichever cluster they are on
// (prod's 97 % full storage first); limit bounds the entries across
// clusters and keeps the fullest; total counts them all.
func TestFleetStorageList(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	down := newDownMember(t, "down")
	prod := newFleetMember(t, "prod", defaultPolicy())
	prod.fake.Update(func(c *proxmoxtest.Cluster) {
		s := c.Storages[len(c.Storages)-1]
		s.Used = s.Total / 100 * 97
	})
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, down, prod), nil), "")
	_, labAlone := fleetCall[proxmoxsafe.ListStorageResult](t, cs, ToolStorageList, map[string]any{"cluster": "lab"})
	_, prodAlone := fleetCall[proxmoxsafe.ListStorageResult](t, cs, ToolStorageList, map[string]any{"cluster": "prod"})

	res, out := fleetCall[FleetStorageResult](t, cs, ToolStorageList, map[string]any{"cluster": "*"})
	if res.IsError {
		t.Fatal(text(t, res))
	}
	wantStatuses(t, out.Clusters, []string{"lab", "down", "prod"}, "down")
	if out.Total != labAlone.Total+prodAlone.Total || len(out.Storages) != out.Total || out.Clusters[0].Total != labAlone.Total || out.Clusters[2].Total != prodAlone.Total {
		t.Fatalf("total %d (lab %d, prod %d), %d entries", out.Total, labAlone.Total, prodAlone.Total, len(out.Storages))
	}
	if first := out.Storages[0]; first.Cluster != "prod" || fullness(first.StorageInfo) < 0.96 {
		t.Errorf("first: %+v", first)
	}
	for i := 1; i < len(out.Storages); i++ {
		if fullness(out.Storages[i].StorageInfo) > fullness(out.Storages[i-1].StorageInfo) {
			t.Errorf("entry %d (%s %s) is fuller than the one before", i, out.Storages[i].Cluster, out.Storages[i].Storage)
		}
	}
	if txt := text(t, res); !strings.Contains(txt, "fullest first on 2 clusters; 1 unreachable: down; fullest: [prod] ") {
		t.Errorf("text: %s", txt)
	}
	res, top := fleetCall[FleetStorageResult](t, cs, ToolStorageList, map[string]any{"cluster": []string{"lab", "prod"}, "limit": 2})
	if res.IsError || len(top.Storages) != 2 || top.Total != out.Total || mustJSON(t, top.Storages) != mustJSON(t, out.Storages[:2]) {
		t.Errorf("limit 2: %s", text(t, res))
	}
}

// TestFleetBackupCoverage: backup_coverage over three clusters, one down:
// pages of 3 walk every guest of both others exactly once, in cluster
// order then VMID, each as that cluster reports it alone; the cursor
// names the cluster its page ended on; each cluster's total is its own.
func TestFleetBackupCoverage(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	down := newDownMember(t, "down")
	prod := newFleetMember(t, "prod", defaultPolicy())
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, down, prod), nil), "")
	want := map[string]proxmoxsafe.GuestCoverage{}
	var order []string
	totals := map[string]int{}
	for _, m := range []*fleetMember{lab, prod} {
		res, alone := fleetCall[proxmoxsafe.BackupCoverageResult](t, cs, ToolBackupCoverage, map[string]any{"cluster": m.name, "limit": 1000})
		if res.IsError || alone.Total == 0 {
			t.Fatalf("%s alone: %s", m.name, text(t, res))
		}
		totals[m.name] = alone.Total
		for _, g := range alone.Guests {
			key := fmt.Sprintf("%s/%d", m.name, g.VMID)
			want[key] = g
			order = append(order, key)
		}
	}

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"cluster": "*", "limit": 3}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, out := fleetCall[FleetCoverageResult](t, cs, ToolBackupCoverage, args)
		if res.IsError {
			t.Fatalf("page %d: %s", page, text(t, res))
		}
		statuses := make([]FleetReadStatus, len(out.Clusters))
		for i, st := range out.Clusters {
			statuses[i] = st.FleetReadStatus
		}
		wantStatuses(t, statuses, []string{"lab", "down", "prod"}, "down")
		if out.Total != totals["lab"]+totals["prod"] || out.Clusters[0].Total != totals["lab"] || out.Clusters[2].Total != totals["prod"] || len(out.Guests) > 3 {
			t.Fatalf("page %d: total %d, %d guests, clusters %+v", page, out.Total, len(out.Guests), out.Clusters)
		}
		for _, g := range out.Guests {
			key := fmt.Sprintf("%s/%d", g.Cluster, g.VMID)
			if mustJSON(t, g.GuestCoverage) != mustJSON(t, want[key]) {
				t.Errorf("%s: %+v, alone %+v", key, g.GuestCoverage, want[key])
			}
			seen = append(seen, key)
		}
		cursor = out.NextCursor
		if cursor == "" {
			break
		}
		last := out.Guests[len(out.Guests)-1]
		if b, _ := base64.RawURLEncoding.DecodeString(cursor); string(b) != fmt.Sprintf("f1:%s:%d", last.Cluster, last.VMID) {
			t.Errorf("page %d: cursor %q after %s/%d", page, b, last.Cluster, last.VMID)
		}
		if page > 20 {
			t.Fatal("paging does not end")
		}
	}
	if strings.Join(seen, " ") != strings.Join(order, " ") {
		t.Errorf("walked %v, want %v", seen, order)
	}
}

// TestFleetLargeAnswers: over two clusters of the 10,000-guest fixture
// each, every fleet read answers within the bound every list keeps, 64 KiB
// of structured content and of text, with its defaults; the paged ones
// also with the largest limit (a page ends at that bound first), and their
// pages still continue where they ended.
//
//	go test ./mcpserver -run TestFleetLargeAnswers -v
//
// prints each answer's size.
func TestFleetLargeAnswers(t *testing.T) {
	t.Parallel()
	var members []*fleetMember
	for _, name := range []string{"east", "west"} {
		c := proxmoxtest.GenerateCluster(10, 1000, 1)
		pol := defaultPolicy()
		pol.AllowedNodes = nil
		for _, n := range c.Nodes {
			pol.AllowedNodes = append(pol.AllowedNodes, n.Name)
		}
		members = append(members, newFleetMemberOn(t, name, c, pol))
	}
	cs := connect(t, t.Context(), NewFleet(fleetClients(members...), nil), "")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{ToolListGuests, map[string]any{}},
		{ToolListGuests, map[string]any{"limit": 1000}},
		{ToolHealthReport, map[string]any{}},
		{ToolStorageList, map[string]any{}},
		{ToolBackupCoverage, map[string]any{}}, // 200 would not fit: the page ends at the bound
	} {
		res, out := fleetCall[struct {
			Guests     []FleetGuest `json:"guests"`
			NextCursor string       `json:"next_cursor"`
		}](t, cs, tc.tool, withCluster(tc.args, "*"))
		if res.IsError {
			t.Fatalf("%s: %s", tc.tool, text(t, res))
		}
		js, txt := len(mustJSON(t, res.StructuredContent)), len(text(t, res))
		if js > 64<<10 || txt > 64<<10 {
			t.Errorf("%s %v: structured %d B, text %d B: want at most 64 KiB each", tc.tool, tc.args, js, txt)
		}
		t.Logf("%s %v over 2 × 10,000 guests: structured %d B, text %d B, %d guests", tc.tool, tc.args, js, txt, len(out.Guests))
		if out.NextCursor == "" {
			continue
		}
		last := out.Guests[len(out.Guests)-1]
		_, next := fleetCall[FleetGuestsResult](t, cs, tc.tool, withCluster(map[string]any{"cursor": out.NextCursor, "limit": 1}, "*"))
		if len(next.Guests) != 1 || next.Guests[0].Cluster != last.Cluster || next.Guests[0].VMID != last.VMID+1 {
			t.Errorf("%s: after %s/%d the next page starts at %+v", tc.tool, last.Cluster, last.VMID, next.Guests)
		}
	}
}
