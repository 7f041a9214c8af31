package mcphttp_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// TestOriginRejected: an Origin that is not allowlisted is 403 on POST, GET
// and DELETE, even with a valid token and a valid session; an allowlisted
// one is served.
func TestOriginRejected(t *testing.T) {
	t.Parallel()
	const allowed = "https://app.example.com"
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{AllowedOrigins: []string{allowed, "http://localhost:6274"}}})
	cs := f.connect(t, aliceTok, "2025-11-25")
	sess := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	port := f.ts.Listener.Addr().(*net.TCPAddr).Port
	evil := []string{
		"http://evil.example",
		"null",
		"http://localhost.evil.example",
		"http://127.0.0.1.nip.io",
		fmt.Sprintf("http://[::1]:%d", port+1),
		fmt.Sprintf("http://127.0.0.1:%d", port+1),
		fmt.Sprintf("https://127.0.0.1:%d", port), // the bound address, another scheme
		fmt.Sprintf("http://localhost:%d", port),  // only the bound address itself is implied
		fmt.Sprintf("http://[::1]:%d", port),      // another loopback address
		fmt.Sprintf("http://localhost:%d", port+1),
		"http://localhost:6275",
		"https://app.example.com.evil.example",
		"http://app.example.com", // scheme differs
		"https://app.example.com:8443",
		"",
		"*",
		"https://app.example.com/path",
	}
	for _, origin := range evil {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			body := ""
			if m == http.MethodPost {
				body = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
			}
			hdr := merge(auth(aliceTok), sess)
			r := f.doOrigin(t, m, body, hdr, origin)
			if r.status != http.StatusForbidden {
				t.Errorf("%s Origin %q: status %d, want 403", m, origin, r.status)
			}
		}
	}
	// Without a token the answer is still 403: the Origin check comes first.
	if r := f.doOrigin(t, http.MethodPost, initBody, nil, "http://evil.example"); r.status != http.StatusForbidden {
		t.Errorf("POST evil origin, no token: %d, want 403", r.status)
	}
	// A cross-site browser request without Origin.
	if r := f.do(t, http.MethodGet, f.url, "", merge(auth(aliceTok), sess, map[string]string{"Sec-Fetch-Site": "cross-site"})); r.status != http.StatusForbidden {
		t.Errorf("GET Sec-Fetch-Site cross-site: %d, want 403", r.status)
	}
	// Allowlisted origins (any case, default port spelled out) work.
	for _, origin := range []string{allowed, "HTTPS://App.Example.com:443", "http://localhost:6274"} {
		r := f.doOrigin(t, http.MethodPost, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, merge(auth(aliceTok), sess), origin)
		if r.status != http.StatusOK || !strings.Contains(r.body, "cluster_status") {
			t.Errorf("POST allowed origin %q: status %d body %.200q", origin, r.status, r.body)
		}
	}
	// The session still works (none of the refused requests touched it).
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("session after refused requests: %v", err)
	}
	// DELETE with an allowed origin ends the session.
	if r := f.doOrigin(t, http.MethodDelete, "", merge(auth(aliceTok), sess), allowed); r.status != http.StatusNoContent {
		t.Errorf("DELETE allowed origin: %d, want 204", r.status)
	}
}

// TestBoundOriginAccepted: with no allowed origin configured, the origin
// of the loopback address the server is bound to is accepted (and nothing
// else, see TestOriginRejected): only a page served by this listener could
// carry it. The MCP conformance suite's dns-rebinding-protection scenario
// uses it as its valid origin.
func TestBoundOriginAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	bound := "http://" + f.ts.Listener.Addr().String()
	if r := f.doOrigin(t, http.MethodPost, initBody, auth(aliceTok), bound); r.status != http.StatusOK {
		t.Errorf("POST with the bound origin %s: %d %s, want 200", bound, r.status, r.body)
	}
	if r := f.doOrigin(t, http.MethodPost, initBody, auth(aliceTok), "http://evil.example"); r.status != http.StatusForbidden {
		t.Errorf("POST with an evil origin: %d, want 403", r.status)
	}
	// The conformance scenario's attack: rebinding sends the attacker's
	// name in both Host and Origin.
	r := f.doOrigin(t, http.MethodPost, initBody, merge(auth(aliceTok), map[string]string{"Host": "evil.example.com"}), "http://evil.example.com")
	if r.status != http.StatusForbidden {
		t.Errorf("rebinding (Host and Origin evil): %d, want 403", r.status)
	}
}

// TestHostRejected: a Host that is neither our address nor allowlisted is
// 403 on every method (DNS rebinding), on loopback.
func TestHostRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{AllowedHosts: []string{"mcp.internal.example", "proxy.example:8443"}}})
	cs := f.connect(t, aliceTok, "2025-11-25")
	sess := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	port := f.ts.Listener.Addr().(*net.TCPAddr).Port
	for _, host := range []string{
		"evil.example",
		"evil.example:" + fmt.Sprint(port),
		"localhost.evil.example:" + fmt.Sprint(port),
		fmt.Sprintf("127.0.0.1:%d", port+1),
		fmt.Sprintf("localhost:%d", port+1),
		"localhost", // port 80
		"proxy.example:8444",
		"192.0.2.1:" + fmt.Sprint(port),
	} {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			r := f.do(t, m, f.url, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, merge(auth(aliceTok), sess, map[string]string{"Host": host}))
			if r.status != http.StatusForbidden {
				t.Errorf("%s Host %q: status %d, want 403", m, host, r.status)
			}
		}
	}
	for _, host := range []string{
		fmt.Sprintf("127.0.0.1:%d", port),
		fmt.Sprintf("localhost:%d", port),
		fmt.Sprintf("LOCALHOST.:%d", port),
		fmt.Sprintf("[::1]:%d", port),
		"mcp.internal.example",
		"mcp.internal.example:9999",
		"proxy.example:8443",
	} {
		r := f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, merge(auth(aliceTok), sess, map[string]string{"Host": host}))
		if r.status != http.StatusOK {
			t.Errorf("POST Host %q: status %d, want 200 (%s)", host, r.status, r.body)
		}
	}
}
