package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// TestToolCallWithToken: a go-sdk client with a valid token lists and calls
// tools end to end, on both protocol eras; the Proxmox fake sees only our
// PVEAPIToken header, and a tool handler never sees the client's token.
func TestToolCallWithToken(t *testing.T) {
	t.Parallel()
	for _, pv := range protocolVersions {
		t.Run(pvName(pv), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOpts{extra: addHeaderEcho})
			cs := f.connect(t, aliceTok, pv)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "cluster_status", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("cluster_status: %v %s", err, textOfSafe(res))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{"tag": "web"}})
			if err != nil || res.IsError {
				t.Fatalf("list_guests: %v %s", err, textOfSafe(res))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "header_echo", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("header_echo: %v %s", err, textOfSafe(res))
			}
			if got := textOf(res); got != "authorization=<none> user=alice" {
				t.Errorf("tool handler saw %q; want no Authorization header and user alice", got)
			}
			reqs := f.fake.Requests()
			if len(reqs) == 0 {
				t.Fatal("the fake Proxmox saw no request")
			}
			for _, r := range reqs {
				a := r.Header.Get("Authorization")
				if a != "PVEAPIToken="+tokenID+"="+canary {
					t.Errorf("upstream %s %s carried Authorization %q", r.Method, r.Path, redact(a))
				}
				if strings.Contains(fmt.Sprint(r.Header), aliceTok) {
					t.Errorf("the client's bearer token reached Proxmox on %s %s", r.Method, r.Path)
				}
			}
		})
	}
}

func redact(s string) string { return strings.ReplaceAll(s, canary, "<canary>") }

func textOfSafe(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return textOf(res)
}

// addHeaderEcho adds a tool that reports what a handler can see of the
// HTTP request: the Authorization header and the verified identity.
func addHeaderEcho(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "header_echo", Description: "test only"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			a, user := "<none>", "<none>"
			if req.Extra != nil {
				if v := req.Extra.Header.Get("Authorization"); v != "" {
					a = v
				}
				if req.Extra.TokenInfo != nil {
					user = req.Extra.TokenInfo.UserID
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorization=" + a + " user=" + user}}}, nil, nil
		})
}

// TestAuthentication: missing, wrong, query-string, Basic and Proxmox-style
// credentials are 401 with a WWW-Authenticate challenge, and nothing reaches
// Proxmox.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	for _, tc := range []struct {
		name string
		url  string
		hdr  map[string]string
	}{
		{"none", f.url, nil},
		{"wrong", f.url, auth("wrong-0123456789abcdef0123456789abcdef")},
		{"prefix of a valid token", f.url, auth(aliceTok[:len(aliceTok)-1])},
		{"empty bearer", f.url, map[string]string{"Authorization": "Bearer"}},
		{"basic", f.url, map[string]string{"Authorization": "Basic YWxpY2U6" + aliceTok}},
		{"query access_token", f.url + "?access_token=" + aliceTok, nil},
		{"query token", f.url + "?token=" + aliceTok, nil},
		{"proxmox token", f.url, map[string]string{"Authorization": "PVEAPIToken=" + tokenID + "=" + canary}},
		{"proxmox token with space", f.url, map[string]string{"Authorization": "PVEAPIToken " + tokenID + "=" + canary}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				body := ""
				if m == http.MethodPost {
					body = initBody
				}
				r := f.do(t, m, tc.url, body, tc.hdr)
				if r.status != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401 (body %q)", m, r.status, r.body)
				}
				if ch := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer ") {
					t.Errorf("%s: WWW-Authenticate %q, want a Bearer challenge", m, ch)
				}
			}
		})
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("the fake Proxmox saw %d requests, want 0", n)
	}
	if n := countSessions(f.server); n != 0 {
		t.Errorf("%d sessions were created by unauthenticated requests", n)
	}
	// The challenge is not sent on success.
	r := f.do(t, http.MethodPost, f.url, pingBody, auth(aliceTok))
	if r.header.Get("WWW-Authenticate") != "" {
		t.Errorf("a successful answer carries WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
	}
}

func (f *fixture) doOrigin(t *testing.T, method, body string, hdr map[string]string, origin string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	req.Header["Origin"] = []string{origin} // set even when empty
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b []byte
	if method != http.MethodGet || resp.StatusCode != http.StatusOK {
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	f.seen.Write([]byte(resp.Status + "\n" + string(b) + "\n"))
	return response{resp.StatusCode, resp.Header, string(b)}
}

// TestNonLoopback drives the handler directly with a non-loopback local
// address, where go-sdk's own Host check is off.
func TestNonLoopback(t *testing.T) {
	t.Parallel()
	remote := func(h http.Handler, method, host string, hdr map[string]string) int {
		req := httptest.NewRequest(method, "http://"+host+"/mcp", strings.NewReader(initBody))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		ctx := context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8000})
		req = req.WithContext(ctx)
		req.RemoteAddr = "198.51.100.7:50000"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	// No verifier: refused even with a perfect Host.
	noAuth := newFixture(t, fixtureOpts{noTok: true, opts: mcphttp.Options{Stateless: true}})
	if c := remote(noAuth.handler, http.MethodPost, "192.0.2.10:8000", nil); c != http.StatusForbidden {
		t.Errorf("no auth, non-loopback: %d, want 403", c)
	}
	// A verifier: 401 without a token, Host still checked.
	withAuth := newFixture(t, fixtureOpts{opts: mcphttp.Options{Stateless: true}})
	if c := remote(withAuth.handler, http.MethodPost, "192.0.2.10:8000", nil); c != http.StatusUnauthorized {
		t.Errorf("auth on, no token, non-loopback: %d, want 401", c)
	}
	for _, host := range []string{"evil.example", "evil.example:8000", "localhost:8000", "127.0.0.1:8000", "192.0.2.10:8001"} {
		if c := remote(withAuth.handler, http.MethodPost, host, auth(aliceTok)); c != http.StatusForbidden {
			t.Errorf("auth on, Host %q, non-loopback: %d, want 403", host, c)
		}
	}
	if c := remote(withAuth.handler, http.MethodPost, "192.0.2.10:8000", merge(auth(aliceTok), map[string]string{"Origin": "http://evil.example"})); c != http.StatusForbidden {
		t.Errorf("auth on, evil Origin, non-loopback: %d, want 403", c)
	}
	if c := remote(withAuth.handler, http.MethodPost, "192.0.2.10:8000", auth(aliceTok)); c != http.StatusOK {
		t.Errorf("auth on, good Host and token, non-loopback: %d, want 200", c)
	}
	// AllowUnauthenticatedRemote: served, but Host and Origin still checked.
	proxied := newFixture(t, fixtureOpts{noTok: true, opts: mcphttp.Options{Stateless: true, AllowUnauthenticatedRemote: true, AllowedHosts: []string{"mcp.example.com"}}})
	if c := remote(proxied.handler, http.MethodPost, "mcp.example.com", nil); c != http.StatusOK {
		t.Errorf("unauthenticated remote allowed, good Host: %d, want 200", c)
	}
	if c := remote(proxied.handler, http.MethodPost, "evil.example", nil); c != http.StatusForbidden {
		t.Errorf("unauthenticated remote allowed, evil Host: %d, want 403", c)
	}
	// Requests without a known local address fail closed.
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	noAuth.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("no local address: %d, want 403", rec.Code)
	}
}

// TestBodyChecks: wrong or missing Content-Type is 415, an oversize body
// 413 (declared or chunked), and nothing reaches Proxmox.
func TestBodyChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{MaxRequestBodyBytes: 64 << 10}})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "garbage;;", "delete"} {
		hdr := merge(auth(aliceTok), map[string]string{"Content-Type": ct})
		if ct == "delete" {
			hdr["Content-Type"] = ""
		}
		if r := f.do(t, http.MethodPost, f.url, initBody, hdr); r.status != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: %d, want 415", ct, r.status)
		}
	}
	if r := f.do(t, http.MethodPost, f.url, initBody, merge(auth(aliceTok), map[string]string{"Content-Type": "application/json; charset=utf-8"})); r.status != http.StatusOK {
		t.Errorf("application/json; charset=utf-8: %d, want 200", r.status)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	if r := f.do(t, http.MethodPost, f.url, big, auth(aliceTok)); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize body: %d, want 413", r.status)
	}
	// Chunked: no Content-Length, so only the bounded read catches it.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, chunked(big))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceTok)
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize chunked body: %d, want 413", resp.StatusCode)
	}
	// Deeply nested JSON within the limit: an error answer, no crash.
	nested := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if r := f.do(t, http.MethodPost, f.url, nested, auth(aliceTok)); r.status >= 500 {
		t.Errorf("nested JSON: %d", r.status)
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("the fake Proxmox saw %d requests, want 0", n)
	}
}

// chunked hides the length of a body so the client sends it chunked.
func chunked(s string) *chunkedReader { return &chunkedReader{r: strings.NewReader(s)} }

type chunkedReader struct{ r *strings.Reader }

func (c *chunkedReader) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestSessionOfAnotherUser: bob cannot use alice's session (403), an
// unknown session id is 404, and alice's session keeps working.
func TestSessionOfAnotherUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	cs := f.connect(t, aliceTok, "2025-11-25")
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	sess := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if r := f.do(t, m, f.url, list, merge(auth(bobTok), sess)); r.status != http.StatusForbidden {
			t.Errorf("%s with another user's session: %d, want 403", m, r.status)
		}
		if r := f.do(t, m, f.url, list, merge(auth(aliceTok), map[string]string{"Mcp-Session-Id": "not-a-session", "Mcp-Protocol-Version": "2025-11-25"})); r.status != http.StatusNotFound {
			t.Errorf("%s with an unknown session: %d, want 404", m, r.status)
		}
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("alice's session after bob's attempts: %v", err)
	}
}

// TestHealthz: no authentication, no Host check, just "ok"; 503 once
// shutting down.
func TestHealthz(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	url := f.ts.URL + mcphttp.HealthPath
	r := f.do(t, http.MethodGet, url, "", map[string]string{"Host": "whatever.example"})
	if r.status != http.StatusOK || r.body != "ok" {
		t.Errorf("healthz: %d %q", r.status, r.body)
	}
	if r := f.do(t, http.MethodPost, url, "{}", nil); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST healthz: %d, want 405", r.status)
	}
	if r := f.do(t, http.MethodGet, f.ts.URL+"/other", "", nil); r.status != http.StatusNotFound {
		t.Errorf("unknown path: %d, want 404", r.status)
	}
	if r := f.do(t, http.MethodGet, f.ts.URL+"/.well-known/oauth-protected-resource", "", nil); r.status != http.StatusNotFound {
		t.Errorf("metadata without ResourceMetadata: %d, want 404", r.status)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := f.handler.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.do(t, http.MethodGet, url, "", nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("healthz after Shutdown: %d, want 503", r.status)
	}
	if r := f.do(t, http.MethodPost, f.url, initBody, auth(aliceTok)); r.status != http.StatusServiceUnavailable {
		t.Errorf("MCP after Shutdown: %d, want 503", r.status)
	}
}

// TestResourceMetadata: RFC 9728 metadata is served at both well-known
// locations and announced on 401.
func TestResourceMetadata(t *testing.T) {
	t.Parallel()
	md := &oauthex.ProtectedResourceMetadata{
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
	}
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{ResourceMetadata: md}})
	r := f.do(t, http.MethodPost, f.url, initBody, nil)
	want := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != want {
		t.Errorf("401: %d, WWW-Authenticate %q, want %q", r.status, r.header.Get("WWW-Authenticate"), want)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := f.do(t, http.MethodGet, f.ts.URL+p, "", nil)
		var got oauthex.ProtectedResourceMetadata
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %q %v", p, r.status, r.body, err)
		}
		if got.Resource != md.Resource || len(got.AuthorizationServers) != 1 || got.AuthorizationServers[0] != md.AuthorizationServers[0] {
			t.Errorf("GET %s: %+v", p, got)
		}
		if r := f.do(t, http.MethodGet, f.ts.URL+p, "", map[string]string{"Host": "evil.example"}); r.status != http.StatusForbidden {
			t.Errorf("GET %s with evil Host: %d, want 403", p, r.status)
		}
	}
}

// TestStateless: tool calls work without sessions; GET and DELETE are 405.
func TestStateless(t *testing.T) {
	t.Parallel()
	for _, pv := range protocolVersions {
		t.Run(pvName(pv), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOpts{opts: mcphttp.Options{Stateless: true}})
			cs := f.connect(t, aliceTok, pv)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("list_guests: %v %s", err, textOfSafe(res))
			}
			for _, m := range []string{http.MethodGet, http.MethodDelete} {
				if r := f.do(t, m, f.url, "", auth(aliceTok)); r.status != http.StatusMethodNotAllowed {
					t.Errorf("%s: %d, want 405", m, r.status)
				}
			}
			if r := f.do(t, http.MethodPost, f.url, pingBody, merge(auth(aliceTok), map[string]string{"Origin": "http://evil.example"})); r.status != http.StatusForbidden {
				t.Errorf("stateless evil origin: %d, want 403", r.status)
			}
		})
	}
}

// TestShutdownWaitsForInFlight: Shutdown lets a running tool call finish,
// refuses new requests meanwhile, then closes the sessions.
func TestShutdownWaitsForInFlight(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	f := newFixture(t, fixtureOpts{extra: func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "test only"},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
			})
	}})
	cs := f.connect(t, aliceTok, "2025-11-25")
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	callDone := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		callDone <- result{res, err}
	}()
	<-started
	shutDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shutDone <- f.handler.Shutdown(ctx)
	}()
	// Wait until Shutdown has begun (health turns 503), then check that it
	// is still waiting and that new requests are refused.
	deadline := time.Now().Add(10 * time.Second)
	for f.do(t, http.MethodGet, f.ts.URL+mcphttp.HealthPath, "", nil).status != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-shutDone:
		t.Fatalf("Shutdown returned (%v) while a call was in flight", err)
	default:
	}
	if r := f.do(t, http.MethodPost, f.url, initBody, auth(aliceTok)); r.status != http.StatusServiceUnavailable {
		t.Errorf("new request during shutdown: %d, want 503", r.status)
	}
	close(release)
	got := <-callDone
	if got.err != nil || got.res.IsError || textOf(got.res) != "done" {
		t.Errorf("in-flight call: %v %v\nlogs:\n%s", got.err, got.res, f.logs.String())
	}
	if err := <-shutDone; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if n := countSessions(f.server); n != 0 {
		t.Errorf("%d sessions left after Shutdown", n)
	}
}

// TestShutdownDeadline: a call that does not finish makes Shutdown return
// the context error.
func TestShutdownDeadline(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	f := newFixture(t, fixtureOpts{extra: func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: "stuck", Description: "test only"},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				close(started)
				// Once shutdown has begun no cancellation can reach the
				// handler (new requests are refused), so only the test
				// can release it.
				<-release
				return nil, nil, errors.New("released")
			})
	}})
	cs := f.connect(t, aliceTok, "2025-11-25")
	callDone := make(chan struct{})
	go func() {
		defer close(callDone)
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "stuck", Arguments: map[string]any{}})
	}()
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := f.handler.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want deadline exceeded", err)
	}
	close(release) // lets the background session close finish
	<-callDone
	cs.Close()
}

// TestNewOptions: invalid options are errors that say what is wrong.
func TestNewOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	for _, tc := range []struct {
		name string
		opts mcphttp.Options
		want string
	}{
		{"null origin", mcphttp.Options{AllowedOrigins: []string{"null"}}, "allowed origin"},
		{"wildcard origin", mcphttp.Options{AllowedOrigins: []string{"*"}}, "allowed origin"},
		{"origin with path", mcphttp.Options{AllowedOrigins: []string{"https://a.example/x"}}, "allowed origin"},
		{"bare host origin", mcphttp.Options{AllowedOrigins: []string{"a.example"}}, "allowed origin"},
		{"host with scheme", mcphttp.Options{AllowedHosts: []string{"https://a.example"}}, "allowed host"},
		{"host wildcard", mcphttp.Options{AllowedHosts: []string{"*.example"}}, "allowed host"},
		{"path", mcphttp.Options{Path: "mcp"}, "Path"},
		{"health path", mcphttp.Options{Path: mcphttp.HealthPath}, "reserved"},
		{"body", mcphttp.Options{MaxRequestBodyBytes: -1}, "MaxRequestBodyBytes"},
		{"metadata without verifier", mcphttp.Options{ResourceMetadata: &oauthex.ProtectedResourceMetadata{Resource: "https://a/mcp", AuthorizationServers: []string{"https://as"}}}, "TokenVerifier"},
	} {
		if _, err := mcphttp.New(f.server, &tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	v, _ := mcphttp.StaticTokenVerifier(map[string]string{"a": aliceTok})
	for _, md := range []*oauthex.ProtectedResourceMetadata{
		{Resource: "https://a.example/mcp"},
		{Resource: "not a url", AuthorizationServers: []string{"https://as.example"}},
		{Resource: "https://a.example/mcp", AuthorizationServers: []string{"as.example"}},
	} {
		if _, err := mcphttp.New(f.server, &mcphttp.Options{TokenVerifier: v, ResourceMetadata: md}); err == nil {
			t.Errorf("metadata %+v accepted", md)
		}
	}
	if _, err := mcphttp.New(f.server, nil); err != nil {
		t.Errorf("New(nil options): %v", err)
	}
}

func TestStaticTokenVerifier(t *testing.T) {
	t.Parallel()
	const secretish = "short-secret-value"
	for _, tc := range []struct {
		name   string
		tokens map[string]string
	}{
		{"none", nil},
		{"short", map[string]string{"a": secretish}},
		{"space", map[string]string{"a": "abcdefghijklmnop qrstuvwxyz0123456789"}},
		{"quote", map[string]string{"a": `abcdefghijklmnop"qrstuvwxyz0123456789`}},
		{"only padding", map[string]string{"a": strings.Repeat("=", 40)}},
		{"empty user", map[string]string{"": aliceTok}},
		{"duplicate", map[string]string{"a": aliceTok, "b": aliceTok}},
	} {
		_, err := mcphttp.StaticTokenVerifier(tc.tokens)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, tok := range tc.tokens {
			if tok != "" && strings.Contains(err.Error(), tok) {
				t.Errorf("%s: the error shows the token: %v", tc.name, err)
			}
		}
	}
	v, err := mcphttp.StaticTokenVerifier(map[string]string{"alice": aliceTok, "bob": bobTok, "carol": "abc/+~._-0123456789ABCDEFGHIJKLMNOP=="})
	if err != nil {
		t.Fatal(err)
	}
	for tok, user := range map[string]string{aliceTok: "alice", bobTok: "bob", "abc/+~._-0123456789ABCDEFGHIJKLMNOP==": "carol"} {
		ti, err := v(t.Context(), tok, nil)
		if err != nil || ti.UserID != user || ti.Expiration.Before(time.Now().AddDate(100, 0, 0)) {
			t.Errorf("%s: %+v %v", user, ti, err)
		}
	}
	for _, tok := range []string{"", aliceTok + "x", strings.ToUpper(aliceTok), bobTok[:len(bobTok)-1]} {
		if _, err := v(t.Context(), tok, nil); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
}

func countSessions(s *mcp.Server) int {
	n := 0
	for range s.Sessions() {
		n++
	}
	return n
}
