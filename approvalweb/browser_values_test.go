package approvalweb_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/cdp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// planValue is the JavaScript that reads, as the person sees it
// (innerText), the value the grant's page shows after the term dt.
func planValue(dt string) string {
	return `(() => { const dt = [...document.querySelectorAll("dl.plan dt")].find(e => e.textContent === ` + cdp.JSString(dt) + `);
return dt ? dt.nextElementSibling.innerText : "(no " + ` + cdp.JSString(dt) + ` + ")"; })()`
}

// TestBrowserShowsValuesExactly: in real headless Chromium, the approval
// page shows values as they are, not as HTML folds white space. The
// approval binds the exact bytes (the arguments digest, the gateway's
// params digest), so "two  spaces" must not read as "two spaces", nor a
// line break or a leading or trailing space vanish. A gateway write
// through the whole server shows its parameter's double space in the
// effect, on the grant's page and in the list; a grant
// whose parameter, effect and state hold line breaks and edge spaces
// shows them too.
func TestBrowserShowsValuesExactly(t *testing.T) {
	chromium := cdp.Chromium()
	if chromium == "" {
		t.Skip("SKIP: chromium is not installed, so the approval page's browser test cannot run; install it with `apt-get install chromium` (CI does)")
	}
	s := newGatewayStack(t)
	res, err := s.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: "api_request", Arguments: map[string]any{
		"method": "POST", "path": "/cluster/ha/groups", "params": map[string]any{"group": "web", "nodes": "pve1", "comment": "two  spaces"}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	m := grantCode.FindStringSubmatch(text.String())
	if !res.IsError || m == nil {
		t.Fatalf("the gateway write was not refused for a grant: %s", text.String())
	}
	gatewayURL := s.page + "grant/" + m[1]

	// A grant as a dedicated tool's refused call makes it, with values a
	// folded rendering would change.
	err = s.store.Approve(context.Background(), proxmoxsafe.ApprovalRequest{
		Action: "snapshot", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100},
		Params:    []proxmoxsafe.ApprovalParam{{Name: "description", Value: "first line\n  indented  twice "}},
		Arguments: "0123456789abcdef", State: proxmoxsafe.GuestState{Status: "running"},
		Effect: "take a snapshot described as\n first line\n  indented  twice ",
	})
	var gr *grant.RequiredError
	if !errors.As(err, &gr) {
		t.Fatalf("Approve: %v, want a grant refusal", err)
	}
	exactURL := s.page + "grant/" + gr.Grant.Code

	tab := cdp.Start(t, chromium).NewTab()
	tab.Navigate(gatewayURL)
	if d := tab.Submit("form[action$=login] button", map[string]string{"secret": browserSecret}); d.Status != http.StatusOK {
		t.Fatalf("login: %d\n%s", d.Status, tab.Text())
	}
	// The list (the page login leads to) shows the parameters and effect
	// in table cells.
	if list := tab.Text(); !strings.Contains(list, `comment="two  spaces"`) || !strings.Contains(list, "description=first line\n  indented  twice ") {
		t.Errorf("the list folds white space of the values:\n%s", list)
	}

	tab.Navigate(gatewayURL)
	if got := tab.Eval(planValue("Effect")); !strings.Contains(got, `comment="two  spaces"`) {
		t.Errorf("the gateway grant's effect reads %q, want comment=\"two  spaces\" with both spaces", got)
	}

	tab.Navigate(exactURL)
	if got, want := tab.Eval(planValue("Parameters")), "description=first line\n  indented  twice "; got != want {
		t.Errorf("the parameters read %q, want %q", got, want)
	}
	if got, want := tab.Eval(planValue("Effect")), "approving will take a snapshot described as\n first line\n  indented  twice "; got != want {
		t.Errorf("the effect reads %q, want %q", got, want)
	}
	if n := len(s.fake.MutatingRequests()); n != 0 {
		t.Errorf("%d mutating requests, want 0 (nothing was approved)", n)
	}
}
