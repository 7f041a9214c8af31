package approvalweb_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/cdp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// operator is a plain HTTP client logged in to the approval page, posting
// its forms the way a browser does from the page itself.
type operator struct {
	t      *testing.T
	base   string // the page's URL
	origin string
	cookie string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func loginOperator(t *testing.T, s *stack) *operator {
	t.Helper()
	u, err := url.Parse(s.page)
	if err != nil {
		t.Fatal(err)
	}
	o := &operator{t: t, base: s.page, origin: u.Scheme + "://" + u.Host}
	resp, _ := o.do("POST", "login", url.Values{"secret": {browserSecret}})
	for _, c := range resp.Cookies() {
		o.cookie = c.Name + "=" + c.Value
	}
	if resp.StatusCode != http.StatusSeeOther || o.cookie == "" {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	return o
}

// do sends one request to the page without following redirects.
func (o *operator) do(method, rel string, form url.Values) (*http.Response, string) {
	o.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, o.base+rel, body)
	if err != nil {
		o.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", o.origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if o.cookie != "" {
		req.Header.Set("Cookie", o.cookie)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// newGatewayStack is the whole server with class gateway-write approved
// by grants only.
func newGatewayStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, proxmoxsafe.Policy{
		AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelGrant}},
	})
}

// postHAGroup asks, through api_request, for POST /cluster/ha/groups: a
// gateway write that names no guest.
func (s *stack) postHAGroup(t *testing.T) (string, bool) {
	t.Helper()
	res, err := s.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: "api_request", Arguments: map[string]any{
		"method": "POST", "path": "/cluster/ha/groups", "params": map[string]any{"group": "web", "nodes": "pve1"}}})
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

// TestGatewayGrantConfirmedByRequest runs a gateway write that names no
// guest (POST /cluster/ha/groups, class gateway-write approved by grants
// only) through the whole server: the refused MCP call leaves a pending
// grant and sends nothing; its page asks for the method and the path
// typed in; typing the HTTP method alone (the word before, shared by
// every POST) or another request's line approves nothing, and the model's
// retry is still refused with zero mutating requests; typing
// "POST /cluster/ha/groups" approves, and the retry sends exactly that
// one request.
func TestGatewayGrantConfirmedByRequest(t *testing.T) {
	t.Parallel()
	s := newGatewayStack(t)
	call := func() (string, bool) { t.Helper(); return s.postHAGroup(t) }
	text, isErr := call()
	m := grantCode.FindStringSubmatch(text)
	if !isErr || m == nil {
		t.Fatalf("the first call was not refused for a grant: %s", text)
	}
	code := m[1]
	if n := len(s.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests before any approval", n)
	}

	o := loginOperator(t, s)
	resp, page := o.do("GET", "grant/"+code, nil)
	for _, want := range []string{"Type the request <code>POST /cluster/ha/groups</code> to approve", "<dd><code>/cluster/ha/groups</code></dd>"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the grant's page (%d) lacks %q:\n%s", resp.StatusCode, want, page)
		}
	}
	token := csrfField.FindStringSubmatch(page)
	if token == nil {
		t.Fatalf("no CSRF token on the grant's page:\n%s", page)
	}
	for _, wrong := range []string{"POST", "/cluster/ha/groups", "groups", "POST groups", "PUT /cluster/ha/groups", "POST /cluster/ha/groups/web", "POST /pools"} {
		resp, body := o.do("POST", "grant/"+code, url.Values{"csrf": {token[1]}, "decision": {"approve"}, "confirm": {wrong}})
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "typed request does not match") || s.status(t, code) != grant.Pending {
			t.Fatalf("approve with %q: %d, grant %s\n%s", wrong, resp.StatusCode, s.status(t, code), body)
		}
	}
	if text, isErr := call(); !isErr || !strings.Contains(text, code) {
		t.Fatalf("the retry after wrong words was not refused: %s", text)
	}
	if n := len(s.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests after wrong words, want 0", n)
	}

	resp, body := o.do("POST", "grant/"+code, url.Values{"csrf": {token[1]}, "decision": {"approve"}, "confirm": {"POST /cluster/ha/groups"}})
	if resp.StatusCode != http.StatusSeeOther || s.status(t, code) != grant.Approved {
		t.Fatalf("approve with the request typed: %d, grant %s\n%s", resp.StatusCode, s.status(t, code), body)
	}
	call() // the fake serves no HA groups (it answers 501), but the request is sent
	got := s.fake.MutatingRequests()
	if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/cluster/ha/groups" || got[0].Form.Get("group") != "web" {
		t.Fatalf("mutating requests after the approval = %+v, want the one POST /cluster/ha/groups", got)
	}
	if g, _ := s.store.Get(code); g.Status != grant.Used || g.Operator != "approval-page:alice" {
		t.Errorf("the grant after use: %+v", g)
	}
}

// TestBrowserGatewayApproval: in real headless Chromium, the grant of a
// gateway write that names no guest shows its path as the target and asks
// for "POST /cluster/ha/groups" typed in (a space and slashes, as a
// browser encodes the form); the HTTP method alone is refused and
// approves nothing; the typed request line approves, and the retry sends
// the one request.
func TestBrowserGatewayApproval(t *testing.T) {
	chromium := cdp.Chromium()
	if chromium == "" {
		t.Skip("SKIP: chromium is not installed, so the approval page's browser test cannot run; install it with `apt-get install chromium` (CI does)")
	}
	s := newGatewayStack(t)
	text, isErr := s.postHAGroup(t)
	m := grantCode.FindStringSubmatch(text)
	if !isErr || m == nil {
		t.Fatalf("the first call was not refused for a grant: %s", text)
	}
	code, grantURL := m[1], s.page+"grant/"+m[1]
	tab := cdp.Start(t, chromium).NewTab()
	tab.Navigate(grantURL)
	if d := tab.Submit("form[action$=login] button", map[string]string{"secret": browserSecret}); d.Status != http.StatusOK {
		t.Fatalf("login: %d\n%s", d.Status, tab.Text())
	}
	tab.Navigate(grantURL)
	page := tab.Text()
	for _, want := range []string{"Target\n/cluster/ha/groups", "POST /cluster/ha/groups", "Type the request POST /cluster/ha/groups to approve"} {
		if !strings.Contains(page, want) {
			t.Errorf("the grant's page does not show %q:\n%s", want, page)
		}
	}
	d := tab.Submit("button.approve", map[string]string{"confirm": "POST"})
	if d.Status != http.StatusUnprocessableEntity || !strings.Contains(tab.Text(), "typed request does not match") || s.status(t, code) != grant.Pending {
		t.Fatalf("approve with the HTTP method: %d, grant %s\n%s", d.Status, s.status(t, code), tab.Text())
	}
	if n := len(s.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests before the approval", n)
	}
	tab.Navigate(grantURL)
	d = tab.Submit("button.approve", map[string]string{"confirm": "POST /cluster/ha/groups"})
	if d.Status != http.StatusOK || s.status(t, code) != grant.Approved {
		t.Fatalf("approve with the request typed: %d, grant %s\n%s", d.Status, s.status(t, code), tab.Text())
	}
	s.postHAGroup(t) // the fake answers 501 (no HA groups), but the request is sent
	if got := s.fake.MutatingRequests(); len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/cluster/ha/groups" {
		t.Errorf("mutating requests after the approval = %+v, want the one POST /cluster/ha/groups", got)
	}
}
