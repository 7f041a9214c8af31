package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// everyClassPolicy enables every class of the tool list, each by the
// phrase, on the demo cluster's three nodes, with the responder's guards
// out of the way (no minimum uptime, reset without an agent).
func everyClassPolicy() proxmoxsafe.Policy {
	pol := proxmoxsafe.Policy{
		AllowedNodes:      []string{"pve1", "pve2", "pve3"},
		Approvals:         map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{},
		MinUptime:         -1,
		ResetWithoutAgent: true,
	}
	for _, info := range Tools(nil, nil) {
		if cl := info.Class; cl != "" && pol.Approvals[cl] == nil {
			pol.Classes = append(pol.Classes, cl)
			pol.Approvals[cl] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}
		}
	}
	return pol
}

// TestRefusalCarriesPlan: without plan and without approval the refusal
// returns the same plan, so one call is enough to learn what would be
// approved. For every mutation tool, the refusal
// without approval carries in its {"error":…} line and in _meta the very
// plan that plan: true returns for the same input and state; nothing
// mutating is sent and the refusal is audited.
func TestRefusalCarriesPlan(t *testing.T) {
	t.Parallel()
	pol := everyClassPolicy() // every class by the phrase, so the refusal is the phrase's
	seen := 0
	for _, info := range Tools(nil, nil) {
		if info.ReadOnly() || toolCases[info.Name].planless {
			continue
		}
		seen++
		args := toolCases[info.Name].plan
		if args == nil {
			t.Errorf("mutation tool %s has no plan arguments in toolCases (mcpserver/tools_test.go): add arguments that pass every check up to the approval", info.Name)
			continue
		}
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), "", fixtureConfig{policy: &pol})
			planned := f.call(t, t.Context(), info.Name, with(args, "plan", true))
			if planned.IsError {
				t.Fatalf("plan: true: %s", text(t, planned))
			}
			var receipt struct {
				Plan map[string]any `json:"plan"`
			}
			structured(t, planned, &receipt)
			if receipt.Plan == nil {
				t.Fatalf("plan: true returned no plan: %s", mustJSON(t, planned))
			}
			res := f.call(t, t.Context(), info.Name, args)
			line, meta := refusalDetail(t, res)
			if line["kind"] != kindApprovalRequired {
				t.Fatalf("not an approval refusal: %s", text(t, res))
			}
			if !reflect.DeepEqual(line["plan"], receipt.Plan) {
				t.Errorf("refusal plan %v\nwant the plan of plan: true %v", line["plan"], receipt.Plan)
			}
			if !reflect.DeepEqual(meta["plan"], receipt.Plan) {
				t.Errorf("_meta plan %v\nwant %v", meta["plan"], receipt.Plan)
			}
			for _, m := range f.fake.MutatingRequests() {
				// vm_reset pings the guest agent (a POST that changes
				// nothing) in its precondition, for plan and call alike.
				if !strings.HasSuffix(m.Path, "/agent/ping") {
					t.Errorf("mutating request: %s %s", m.Method, m.Path)
				}
			}
			if recs := f.audit.records(t); len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused {
				t.Errorf("audit = %+v, want one refusal", recs)
			}
		})
	}
	if seen < planned() {
		t.Errorf("%d mutation tools with a plan, but %d rows: a row names no tool", seen, planned())
	}
}

// TestGrantRefusalCarriesPlan: the grant level's refusal (a code for the
// operator) carries the plan too.
func TestGrantRefusalCarriesPlan(t *testing.T) {
	t.Parallel()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := defaultPolicy()
	pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}
	f := &fixture{audit: newMemAudit(), fake: proxmoxtest.NewServer(nil)}
	t.Cleanup(f.fake.Close)
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: f.fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret, Fingerprint: f.fake.Fingerprint(),
		Policy: pol, Audit: f.audit, Approvers: []proxmoxsafe.Approver{store},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.cs = connect(t, t.Context(), New(c, nil), "")
	args := toolCases[ToolGuestPower].plan
	planned := f.call(t, t.Context(), ToolGuestPower, with(args, "plan", true))
	var receipt struct {
		Plan map[string]any `json:"plan"`
	}
	structured(t, planned, &receipt)
	// Under the grant level alone a phrase approves nothing: the plan
	// names none, and says a person approves it.
	if pt := text(t, planned); strings.Contains(pt, "APPROVE ") || !strings.Contains(pt, "no phrase approves it") || receipt.Plan["approval"] != nil {
		t.Errorf("plan under the grant level shows a phrase: %s", pt)
	}
	res := f.call(t, t.Context(), ToolGuestPower, args)
	line, meta := refusalDetail(t, res)
	if !strings.Contains(text(t, res), "proxmox-safe-mcp approve ") || receipt.Plan == nil ||
		!reflect.DeepEqual(line["plan"], receipt.Plan) || !reflect.DeepEqual(meta["plan"], receipt.Plan) {
		t.Errorf("grant refusal %s\nwant the plan %v", text(t, res), receipt.Plan)
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}

// with returns a copy of args with k set to v.
func with(args map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for key, val := range args {
		out[key] = val
	}
	return out
}

// refusalDetail returns the {"error":…} object of an error result's last
// text line and the one in _meta.
func refusalDetail(t *testing.T, res *mcp.CallToolResult) (line, meta map[string]any) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not refused: %s", mustJSON(t, res))
	}
	txt := text(t, res)
	var l struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(txt[strings.LastIndexByte(txt, '\n')+1:]), &l); err != nil || l.Error == nil {
		t.Fatalf("no error line in %q: %v", txt, err)
	}
	m, _ := res.Meta[ErrorMetaKey].(map[string]any)
	if m == nil {
		t.Fatalf("no %s in _meta: %s", ErrorMetaKey, mustJSON(t, res))
	}
	return l.Error, m
}
