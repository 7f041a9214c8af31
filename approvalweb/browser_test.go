package approvalweb_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/cdp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	browserSecret = "operator-browser-secret-0123456789"
	browserMCPTok = "mcp-browser-token-0123456789abcdef0123456789"
)

// stack is the whole server as the binary runs it in HTTP mode: a fake
// Proxmox, the library with power approved only by grants, the MCP
// server and, on the same listener, the approval page.
type stack struct {
	fake  *proxmoxtest.Server
	store *grant.Store
	ts    *httptest.Server
	mcp   *mcp.ClientSession
	page  string // the approval page's URL
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, proxmoxsafe.Policy{
		AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}},
	})
}

// newStackWith is newStack with another policy (its approvers: the grant
// store only).
func newStackWith(t *testing.T, policy proxmoxsafe.Policy) *stack {
	t.Helper()
	s := &stack{}
	s.fake = proxmoxtest.NewServer(nil)
	t.Cleanup(s.fake.Close)
	var err error
	if s.store, err = grant.Open(t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: s.fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: s.fake.Fingerprint(), Audit: auditlog.New(io.Discard, nil),
		Policy:    policy,
		Approvers: []proxmoxsafe.Approver{s.store}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.ts = httptest.NewUnstartedServer(nil)
	s.page = "http://" + s.ts.Listener.Addr().String() + approvalweb.DefaultPath
	page, err := approvalweb.New(s.store, &approvalweb.Options{Secret: browserSecret, OtherSecrets: []string{browserMCPTok}, Operator: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := mcphttp.StaticTokenVerifier(map[string]string{"agent": browserMCPTok})
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcphttp.New(mcpserver.New(client, &mcpserver.Options{ApprovalPageURL: s.page}),
		&mcphttp.Options{TokenVerifier: verifier, Pages: page, PagesPath: page.Path()})
	if err != nil {
		t.Fatal(err)
	}
	s.ts.Config.Handler = h
	s.ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		s.ts.Close()
	})
	s.mcp, err = mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.ts.URL + mcphttp.DefaultPath, HTTPClient: &http.Client{Transport: bearer{browserMCPTok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.mcp.Close() })
	return s
}

// shutdown100 asks to shut down the fake's running VM 100.
func (s *stack) shutdown100(t *testing.T) (string, bool) {
	t.Helper()
	res, err := s.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: "guest_power",
		Arguments: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}})
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

func (s *stack) status(t *testing.T, code string) grant.Status {
	t.Helper()
	g, err := s.store.Get(code)
	if err != nil {
		t.Fatal(err)
	}
	return g.Status
}

// evilSite is another origin whose page, opened in the operator's
// browser, posts an approval to the page (a CSRF attack): script is
// allowed there, so it submits its form by itself.
func evilSite(t *testing.T, target string, posted *atomic.Int32) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action=%q><input name="decision" value="approve">
<input name="confirm" value="100"><input name="csrf" value="guessed"></form><script>document.forms[0].submit()</script>`, target)
	}))
	t.Cleanup(ts.Close)
	return ts
}

var grantCode = regexp.MustCompile(`grant ([0-9A-Z]{4}-[0-9A-Z]{4})`)

// TestBrowserApproval drives the approval page in real headless Chromium
// next to a real MCP client: the page needs a login, refuses a wrong one
// and the MCP token, shows the plan, refuses a CSRF attack from another
// origin and a form without its CSRF token, approves once (a second tab's
// approval is refused), and the MCP retry then runs with exactly one
// mutating request. Every page answer carries the CSP and frame headers.
//
// It needs Debian's chromium package (.ci/run installs it) and skips only
// when no chromium binary is on PATH. With APPROVAL_PAGE_SCREENSHOT=FILE
// it writes a screenshot of the grant's page there (docs/approval-page.png
// is made so).
func TestBrowserApproval(t *testing.T) {
	chromium := cdp.Chromium()
	if chromium == "" {
		t.Skip("SKIP: chromium is not installed, so the approval page's browser test cannot run; install it with `apt-get install chromium` (CI does)")
	}
	s := newStack(t)

	text, isErr := s.shutdown100(t)
	m := grantCode.FindStringSubmatch(text)
	if !isErr || m == nil || !strings.Contains(text, s.page+"grant/"+m[1]) {
		t.Fatalf("the refused call does not name the grant's page:\n%s", text)
	}
	code, grantURL := m[1], s.page+"grant/"+m[1]

	b := cdp.Start(t, chromium)
	tab := b.NewTab()
	checkHeaders := func(what string, d cdp.Document) {
		t.Helper()
		csp := d.Headers["Content-Security-Policy"]
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q (headers %v)", what, csp, want, d.Headers)
			}
		}
		if d.Headers["X-Frame-Options"] != "DENY" || d.Headers["Referrer-Policy"] != "no-referrer" {
			t.Errorf("%s: headers %v", what, d.Headers)
		}
	}

	// Login required: the grant's page shows the login form, not the grant.
	d := tab.Navigate(grantURL)
	checkHeaders("grant page logged out", d)
	if d.Status != http.StatusUnauthorized || !strings.Contains(tab.Text(), "Log in") || strings.Contains(tab.Text(), "shutdown") {
		t.Fatalf("logged out: %d\n%s", d.Status, tab.Text())
	}
	if got := tab.Eval("document.scripts.length"); got != "0" {
		t.Errorf("the page has %s scripts", got)
	}
	// The inline stylesheet is the one the CSP allows by hash: the browser
	// applied it (a wrong hash would leave the header unstyled).
	if got := tab.Eval("getComputedStyle(document.querySelector('header')).backgroundColor"); got != "rgb(35, 48, 63)" {
		t.Errorf("the page's stylesheet was not applied (CSP hash?): header background %s", got)
	}
	// Wrong logins, the MCP token among them, are refused.
	for _, secret := range []string{"wrong-secret-0123456789", browserMCPTok} {
		d = tab.Submit("form[action$=login] button", map[string]string{"secret": secret})
		checkHeaders("failed login", d)
		if d.Status != http.StatusUnauthorized || !strings.Contains(tab.Text(), "Wrong operator secret") {
			t.Fatalf("login with a wrong secret: %d\n%s", d.Status, tab.Text())
		}
	}
	d = tab.Submit("form[action$=login] button", map[string]string{"secret": browserSecret})
	checkHeaders("list", d)
	if d.Status != http.StatusOK || !strings.Contains(tab.Text(), code) || !strings.Contains(tab.Text(), "pve1/qemu/100") {
		t.Fatalf("after login: %d\n%s", d.Status, tab.Text())
	}

	// The plan.
	d = tab.Navigate(grantURL)
	checkHeaders("grant page", d)
	page := tab.Text()
	for _, want := range []string{"Grant " + code, "pending", "shutdown", "pve1/qemu/100", "Current state", "running",
		"approving will", "POST /nodes/pve1/qemu/100/status/shutdown", "Risk", proxmoxsafe.ActionRisk("shutdown"), "Type the VMID 100 to approve", "Approve once", "Deny"} {
		if !strings.Contains(page, want) {
			t.Errorf("the grant's page does not show %q:\n%s", want, page)
		}
	}
	if out := os.Getenv("APPROVAL_PAGE_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, tab.Screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A CSRF attack: another origin's page, opened in the logged-in
	// browser, posts an approval. SameSite=Strict keeps the cookie home
	// and the Origin check refuses it.
	var posted atomic.Int32
	evil := evilSite(t, grantURL, &posted)
	attack := b.NewTab()
	attack.Navigate(evil.URL)            // the evil page loads…
	deadline := time.Now().Add(cdp.Wait) // …and its script submits the form
	for !strings.Contains(attack.Eval("location.href"), "/approve/grant/") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if posted.Load() == 0 || s.status(t, code) != grant.Pending {
		t.Fatalf("cross-origin post: evil page served %d times, grant %s", posted.Load(), s.status(t, code))
	}
	if !strings.Contains(attack.Text(), "cross-origin") && !strings.Contains(attack.Text(), "not logged in") {
		t.Errorf("the cross-origin post was not refused as such:\n%s", attack.Text())
	}

	// The form without its CSRF token is refused.
	tab.Eval(`document.querySelector("button.approve").form.querySelector("input[name=csrf]").remove(), "ok"`)
	d = tab.Submit("button.approve", map[string]string{"confirm": "100"})
	checkHeaders("CSRF refusal", d)
	if d.Status != http.StatusForbidden || !strings.Contains(tab.Text(), "CSRF") || s.status(t, code) != grant.Pending {
		t.Fatalf("approve without CSRF token: %d, grant %s\n%s", d.Status, s.status(t, code), tab.Text())
	}
	if n := len(s.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests before the approval", n)
	}

	// Two tabs show the pending grant; the first approves, the second's
	// approval is refused: approve works once.
	second := b.NewTab()
	second.Navigate(grantURL)
	tab.Navigate(grantURL)
	d = tab.Submit("button.approve", map[string]string{"confirm": "100"})
	if d.Status != http.StatusOK || !strings.Contains(tab.Text(), "approved") || !strings.Contains(tab.Text(), "approval-page:alice") ||
		s.status(t, code) != grant.Approved {
		t.Fatalf("approve: %d, grant %s\n%s", d.Status, s.status(t, code), tab.Text())
	}
	d = second.Submit("button.approve", map[string]string{"confirm": "100"})
	if d.Status != http.StatusConflict || !strings.Contains(second.Text(), "not pending") {
		t.Errorf("the second tab's approval: %d\n%s", d.Status, second.Text())
	}

	// The model repeats the call: it runs, once.
	if text, isErr := s.shutdown100(t); isErr || !strings.Contains(text, "UPID:") {
		t.Fatalf("the approved retry: %s", text)
	}
	if n := len(s.fake.MutatingRequests()); n != 1 {
		t.Errorf("%d mutating requests after the approval, want 1", n)
	}
	if g, _ := s.store.Get(code); g.Status != grant.Used || g.Operator != "approval-page:alice" {
		t.Errorf("the grant after use: %+v", g)
	}
}
