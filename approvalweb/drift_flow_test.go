package approvalweb_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// destroy103 asks, through guest_destroy, to destroy the demo cluster's
// VM 103 (pve2, stopped, one 100G disk) with its unreferenced disks.
func (s *stack) destroy103(t *testing.T) (string, bool) {
	t.Helper()
	res, err := s.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: "guest_destroy", Arguments: map[string]any{
		"node": "pve2", "type": "qemu", "vmid": 103, "purge": false, "destroy_unreferenced_disks": true}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestApprovalPageDrift runs the destroy of VM 103 through the whole
// server with class destroy approved by grants only. The page shows the
// grant's cluster, the disks that are deleted, the risk and the request;
// the operator approves it there. Then something changes before the
// model repeats the call: a 2T disk attached to VM 103 changes what the
// destroy deletes, so the retry is refused with a new code (whose page
// shows the 2T disk) and nothing is sent; another guest renamed changes
// nothing the grant showed, so the retry sends the one DELETE.
func TestApprovalPageDrift(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(g *proxmoxtest.Guest)
		vmid   int
		now    string // "" = the approval still applies
	}{
		{"a 2T disk attached", func(g *proxmoxtest.Guest) { g.Config = map[string]string{"scsi1": "local-lvm:vm-103-disk-1,size=2T"} }, 103, "(2T)"},
		{"another guest renamed", func(g *proxmoxtest.Guest) { g.Name = "renamed-meanwhile" }, 100, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStackWith(t, proxmoxsafe.Policy{
				AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassDestroy},
				Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelGrant}},
			})
			text, isErr := s.destroy103(t)
			m := grantCode.FindStringSubmatch(text)
			if !isErr || m == nil {
				t.Fatalf("the first call was not refused for a grant: %s", text)
			}
			code := m[1]
			o := loginOperator(t, s)
			resp, page := o.do("GET", "grant/"+code, nil)
			cluster := strings.TrimSuffix(s.fake.URL, "/") + " as " + proxmoxtest.DefaultTokenID
			for _, want := range []string{"<dt>Cluster</dt><dd><code>" + cluster + "</code>", "pve2/qemu/103 (build-runner)", "scsi0 local-lvm:vm-103-disk-0 (100G)",
				"<dt>Risk</dt><dd>" + proxmoxsafe.ActionRisk("destroy"), "DELETE /nodes/pve2/qemu/103 destroy-unreferenced-disks=1 purge=0"} {
				if resp.StatusCode != http.StatusOK || !strings.Contains(page, want) {
					t.Errorf("the grant's page (%d) lacks %q:\n%s", resp.StatusCode, want, page)
				}
			}
			token := csrfField.FindStringSubmatch(page)
			if token == nil {
				t.Fatalf("no CSRF token on the grant's page:\n%s", page)
			}
			if resp, body := o.do("POST", "grant/"+code, url.Values{"csrf": {token[1]}, "decision": {"approve"}, "confirm": {"103"}}); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("approve: %d\n%s", resp.StatusCode, body)
			}
			s.fake.Update(func(c *proxmoxtest.Cluster) {
				for _, g := range c.Guests {
					if g.VMID == tc.vmid {
						tc.change(g)
					}
				}
			})
			text, isErr = s.destroy103(t)
			muts := s.fake.MutatingRequests()
			if tc.now == "" {
				if isErr || len(muts) != 1 || muts[0].Method != "DELETE" {
					t.Fatalf("unrelated change: refused=%v, mutating %+v: %s", isErr, muts, text)
				}
				return
			}
			again := grantCode.FindStringSubmatch(text)
			if !isErr || len(muts) != 0 || again == nil || again[1] == code || !strings.Contains(text, "grant "+code+" was approved for this call, but not for what it does now") {
				t.Fatalf("after the change: refused=%v, mutating %+v: %s", isErr, muts, text)
			}
			if s.status(t, code) != grant.Approved {
				t.Errorf("the stale grant is %s, want it approved and unused", s.status(t, code))
			}
			if _, page := o.do("GET", "grant/"+again[1], nil); !strings.Contains(page, tc.now) {
				t.Errorf("the new grant's page does not show %q:\n%s", tc.now, page)
			}
		})
	}
}
