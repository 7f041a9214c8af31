package mcpserver

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// fleetMember is one cluster of a test fleet: its fake, client and audit.
type fleetMember struct {
	name   string
	fake   *proxmoxtest.Server
	client *proxmoxsafe.Client
	audit  *memAudit
}

// newFleetMember starts a fake (the demo cluster) and a client named name
// with policy pol and approvers.
func newFleetMember(tb testing.TB, name string, pol proxmoxsafe.Policy, approvers ...proxmoxsafe.Approver) *fleetMember {
	tb.Helper()
	return newFleetMemberOn(tb, name, nil, pol, approvers...)
}

// newFleetMemberOn is newFleetMember with the fake serving cluster c (nil:
// the demo cluster).
func newFleetMemberOn(tb testing.TB, name string, cluster *proxmoxtest.Cluster, pol proxmoxsafe.Policy, approvers ...proxmoxsafe.Approver) *fleetMember {
	tb.Helper()
	fake := proxmoxtest.NewServer(cluster)
	tb.Cleanup(fake.Close)
	audit := newMemAudit()
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Policy: pol, Audit: audit, ClusterName: name,
		Approvers: approvers, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &fleetMember{name: name, fake: fake, client: c, audit: audit}
}

func fleetClients(ms ...*fleetMember) []*proxmoxsafe.Client {
	var cs []*proxmoxsafe.Client
	for _, m := range ms {
		cs = append(cs, m.client)
	}
	return cs
}

// requestCounts is every member's number of upstream requests.
func requestCounts(ms ...*fleetMember) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		out[m.name] = len(m.fake.Requests())
	}
	return out
}

func resetRequests(ms ...*fleetMember) {
	for _, m := range ms {
		m.fake.ResetRequests()
	}
}

func withCluster(args map[string]any, cluster any) map[string]any {
	out := map[string]any{"cluster": cluster}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// TestFleetThreeClusters: three fakes behind one server. Every tool takes a
// required cluster; reads and a mutation run on the cluster named and no
// other, and name it in the result; a call naming no cluster or an unknown
// one is refused with zero requests anywhere and nothing audited; a
// phrase given for lab is refused on prod with nothing mutating sent
// there; a tool prod's policy does not offer is refused there, audited.
func TestFleetThreeClusters(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	prod := newFleetMember(t, "prod", defaultPolicy())
	ro := newFleetMember(t, "ro", proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, ReadOnly: true})
	all := []*fleetMember{lab, prod, ro}
	server := NewFleet(fleetClients(all...), nil)
	cs := connect(t, t.Context(), server, "")

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	enums := map[string][]string{}
	for _, tool := range tools.Tools {
		var s struct {
			Properties map[string]struct {
				Enum  []string `json:"enum"`
				AnyOf []struct {
					Enum []string `json:"enum"`
				} `json:"anyOf"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if tool.Name != ToolClusterList && !slices.Contains(s.Required, "cluster") {
			t.Errorf("%s: cluster is not required: %s", tool.Name, raw)
		}
		enums[tool.Name] = s.Properties["cluster"].Enum
		if p := s.Properties["cluster"]; len(p.AnyOf) > 0 { // a fleet read: a name, "*" or a list
			enums[tool.Name] = p.AnyOf[0].Enum
		}
	}
	if !slices.Equal(enums[ToolListGuests], []string{"lab", "prod", "ro", "*"}) || !slices.Equal(enums[ToolGuestPower], []string{"lab", "prod"}) {
		t.Errorf("enums: list_guests %v, guest_power %v", enums[ToolListGuests], enums[ToolGuestPower])
	}
	if want := Tools(lab.client, nil); len(tools.Tools) != len(want)+1 {
		t.Errorf("%d tools listed, want %d (cluster_list and lab's, the widest policy)", len(tools.Tools), len(want)+1)
	}

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	// A read on each cluster reaches that cluster alone.
	for _, m := range all {
		resetRequests(all...)
		res := call(ToolListGuests, map[string]any{"cluster": m.name})
		if res.IsError {
			t.Fatalf("list_guests on %s: %s", m.name, text(t, res))
		}
		var out struct {
			Cluster string `json:"cluster"`
			Total   int    `json:"total"`
		}
		if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil || out.Cluster != m.name || out.Total == 0 {
			t.Errorf("list_guests on %s: %+v %v", m.name, out, err)
		}
		if !strings.Contains(text(t, res), "cluster: "+m.name) {
			t.Errorf("list_guests on %s: the text does not name the cluster: %s", m.name, text(t, res))
		}
		for _, o := range all {
			if n := len(o.fake.Requests()); (o == m) != (n > 0) {
				t.Errorf("list_guests on %s: %d requests on %s", m.name, n, o.name)
			}
		}
	}

	// No cluster, an unknown one, another type, a repeated key: refused
	// with nothing sent anywhere and nothing audited.
	resetRequests(all...)
	for _, args := range []map[string]any{
		shutdown101,
		withCluster(shutdown101, "dev"),
		withCluster(shutdown101, "LAB"),
		withCluster(shutdown101, 1),
		withCluster(shutdown101, ""),
	} {
		res := call(ToolGuestPower, args)
		wantError(t, res, "cluster", "no action was taken")
		if !strings.Contains(text(t, res), `"kind":"invalid_input"`) || !strings.Contains(text(t, res), `"action_taken":"none"`) {
			t.Errorf("%v: %s", args["cluster"], text(t, res))
		}
	}
	res := call(ToolListGuests, nil)
	wantError(t, res, "cluster: is required")
	for name, n := range requestCounts(all...) {
		if n != 0 {
			t.Errorf("%d requests on %s after calls naming no configured cluster", n, name)
		}
	}
	for _, m := range all {
		if recs := m.audit.records(t); len(recs) != 0 {
			t.Errorf("%s audited %+v for a call naming no configured cluster", m.name, recs)
		}
	}

	// Lab's refusal names lab's phrase; that phrase on prod is refused
	// there, nothing mutating sent; each phrase works on its own cluster.
	res = call(ToolGuestPower, withCluster(shutdown101, "lab"))
	got := wantError(t, res, "[lab] ", "APPROVE shutdown pve1/qemu/101 cluster=lab")
	if !strings.Contains(got, `{"error":{"cluster":"lab",`) {
		t.Errorf("lab's refusal has no cluster in its error object: %s", got)
	}
	labPhrase := "APPROVE shutdown pve1/qemu/101 cluster=lab"
	args := withCluster(shutdown101, "prod")
	args["approval"] = labPhrase
	res = call(ToolGuestPower, args)
	wantError(t, res, "[prod] ", "APPROVE shutdown pve1/qemu/101 cluster=prod")
	if m := prod.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("prod: mutating requests after lab's phrase: %v", m)
	}
	for _, m := range []*fleetMember{lab, prod} {
		args := withCluster(shutdown101, m.name)
		args["approval"] = "APPROVE shutdown pve1/qemu/101 cluster=" + m.name
		res := call(ToolGuestPower, args)
		if res.IsError {
			t.Fatalf("shutdown on %s: %s", m.name, text(t, res))
		}
		if !strings.Contains(mustJSON(t, res.StructuredContent), `"cluster":"`+m.name+`"`) {
			t.Errorf("%s's receipt does not name the cluster: %s", m.name, res.StructuredContent)
		}
		if n := len(m.fake.MutatingRequests()); n != 1 {
			t.Errorf("%s: %d mutating requests, want the one shutdown", m.name, n)
		}
		recs := m.audit.records(t)
		last := recs[len(recs)-1]
		if !strings.HasPrefix(last.Cluster, m.name+": ") {
			t.Errorf("%s's audit record names cluster %q", m.name, last.Cluster)
		}
	}
	if n := len(ro.fake.MutatingRequests()); n != 0 {
		t.Errorf("ro: %d mutating requests", n)
	}

	// A tool ro's policy does not offer: refused there, audited there.
	resetRequests(all...)
	res = call(ToolGuestPower, withCluster(shutdown101, "ro"))
	wantError(t, res, "[ro] ", "guest_power is not offered on cluster ro", "no action was taken")
	if n := len(ro.fake.Requests()); n != 0 {
		t.Errorf("ro: %d requests after a tool it does not offer", n)
	}
	if recs := ro.audit.records(t); len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused {
		t.Errorf("ro's audit: %+v, want one refusal", recs)
	}

	// A schema refusal of a mutation is audited by the cluster named.
	bad := withCluster(shutdown101, "prod")
	bad["vmid"] = 5
	before := len(prod.audit.records(t))
	if got := wantError(t, call(ToolGuestPower, bad), "[prod] ", "vmid"); !strings.Contains(got, `{"error":{"cluster":"prod",`) {
		t.Errorf("a schema refusal on prod: %s", got)
	}
	if recs := prod.audit.records(t); len(recs) != before+1 || recs[len(recs)-1].Event != proxmoxsafe.AuditRefused {
		t.Errorf("prod's audit after a schema refusal: %+v", recs[before:])
	}
}

// TestFleetGrantNeverCrosses: two clusters whose servers share one grant
// store (one state directory): a grant the operator approved for lab does
// not approve the same call on prod, which gets a pending grant of its own
// and sends nothing mutating; lab's call then runs once.
func TestFleetGrantNeverCrosses(t *testing.T) {
	t.Parallel()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := defaultPolicy()
	pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}
	lab := newFleetMember(t, "lab", pol, store)
	prod := newFleetMember(t, "prod", pol, store)
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, prod), nil), "")
	call := func(cluster string) *mcp.CallToolResult {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: withCluster(shutdown101, cluster)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	wantError(t, call("lab"), "[lab] ", "no action was taken")
	grants, _ := store.List()
	if len(grants) != 1 || grants[0].Cluster.Name != "lab" {
		t.Fatalf("grants after lab's call: %+v", grants)
	}
	if _, err := store.Decide(grants[0].Code, true, "operator"); err != nil {
		t.Fatal(err)
	}
	wantError(t, call("prod"), "[prod] ", "no action was taken")
	if m := prod.fake.MutatingRequests(); len(m) != 0 {
		t.Fatalf("prod ran on lab's grant: %v", m)
	}
	grants, _ = store.List()
	if len(grants) != 2 {
		t.Errorf("grants after prod's call: %+v, want prod's own pending one beside lab's", grants)
	}
	if res := call("lab"); res.IsError {
		t.Fatalf("lab with its approved grant: %s", text(t, res))
	}
	if n := len(lab.fake.MutatingRequests()); n != 1 {
		t.Errorf("lab: %d mutating requests, want 1", n)
	}
}

// TestFleetOfOneIsNew: a fleet of one client is the one-cluster server:
// the same tools and schemas, no cluster parameter.
func TestFleetOfOneIsNew(t *testing.T) {
	t.Parallel()
	m := newFleetMember(t, "lab", defaultPolicy())
	one := connect(t, t.Context(), NewFleet([]*proxmoxsafe.Client{m.client}, nil), "")
	plain := connect(t, t.Context(), New(m.client, nil), "")
	a, err := one.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := plain.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, a) != mustJSON(t, b) {
		t.Error("a fleet of one lists other tools than New")
	}
	if strings.Contains(mustJSON(t, a), `"cluster":{`) {
		t.Error("a fleet of one has a cluster parameter")
	}
}

// TestFleetPanics: programmer errors are found at start.
func TestFleetPanics(t *testing.T) {
	t.Parallel()
	named := newFleetMember(t, "lab", defaultPolicy())
	twin := newFleetMember(t, "lab", defaultPolicy())
	unnamed := newClient(t, named.fake, defaultPolicy(), "", newMemAudit(), slog.New(slog.DiscardHandler))
	for name, clients := range map[string][]*proxmoxsafe.Client{
		"none":     nil,
		"nil":      {nil},
		"unnamed":  {named.client, unnamed},
		"same":     {named.client, twin.client},
		"nil of 2": {named.client, nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			NewFleet(clients, nil)
		}()
	}
}

// TestFleetElicitationNamesCluster: on a fleet the elicitation form says
// which cluster the change is for, and an accepted form runs on that
// cluster alone.
func TestFleetElicitationNamesCluster(t *testing.T) {
	t.Parallel()
	pol := defaultPolicy()
	pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelElicit}}
	approver := func() proxmoxsafe.Approver {
		ap, err := NewElicitApprover(nil)
		if err != nil {
			t.Fatal(err)
		}
		return ap
	}
	lab := newFleetMember(t, "lab", pol, approver())
	prod := newFleetMember(t, "prod", pol, approver())
	f := &elicitFixture{server: NewFleet(fleetClients(lab, prod), nil)}
	seen := make(chan string, 4)
	var count atomic.Int32
	cs := f.connectWith(t, "", answering(&count, seen, func(int32) *mcp.ElicitResult { return accept("CONFIRM") }))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: withCluster(shutdown101, "prod")})
	if err != nil {
		t.Fatal(err)
	}
	msg := <-seen
	if !strings.Contains(msg, "Cluster: prod: https://") {
		t.Errorf("the form does not name the cluster:\n%s", msg)
	}
	if n := len(prod.fake.MutatingRequests()); !res.IsError && n != 1 {
		t.Errorf("prod: %d mutating requests after an accepted form", n)
	}
	if n := len(lab.fake.MutatingRequests()); n != 0 {
		t.Errorf("lab: %d mutating requests", n)
	}
}
