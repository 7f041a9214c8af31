package mcphttp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// discoverHeaders are what a 2026-07-28 client sends with server/discover.
var discoverHeaders = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}

const discoverBody = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

// rpcError decodes a JSON-RPC error answer.
func rpcError(t *testing.T, r response) (id json.RawMessage, code int, msg string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body := r.body
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		_, body, _ = strings.Cut(body, "data: ")
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %d %s %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	return m.ID, m.Error.Code, m.Error.Message
}

// TestDiscoverTellsTheTruth: the stateful endpoint refuses the 2026-07-28
// server/discover with "method not found" (the answer every older server
// gives), instead of a success that the 2026-07-28 requests after it would
// contradict (-32022); a 2026-07-28 client falls back to initialize and
// works, as does a 2025-11-25 client. The stateless endpoint serves
// 2026-07-28 for real.
func TestDiscoverTellsTheTruth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	r := f.do(t, http.MethodPost, f.url, discoverBody, merge(auth(aliceTok), discoverHeaders))
	if id, code, _ := rpcError(t, r); r.status != http.StatusOK || code != -32601 || string(id) != "1" {
		t.Errorf("stateful server/discover: %d code %d id %s, want 200 -32601 id 1", r.status, code, id)
	}
	for _, tc := range []struct {
		stateless bool
		pv, want  string
	}{
		{false, "", "2025-11-25"}, // a 2026-07-28 client falls back
		{false, "2025-11-25", "2025-11-25"},
		{true, "", "2026-07-28"},
		{true, "2025-11-25", "2025-11-25"},
	} {
		t.Run(pvName(tc.pv), func(t *testing.T) {
			f := newFixture(t, fixtureOpts{opts: mcphttp.Options{Stateless: tc.stateless}})
			cs := f.connect(t, aliceTok, tc.pv)
			if got := cs.InitializeResult().ProtocolVersion; got != tc.want {
				t.Errorf("stateless=%t client %q negotiated %q, want %q", tc.stateless, pvName(tc.pv), got, tc.want)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("list_guests: %v %s", err, textOfSafe(res))
			}
		})
	}
}

// TestUnknownMethodLikeStdio: a call of a method nobody serves gets the
// JSON-RPC error -32601 with its id, as on stdio, not a text/plain 400.
func TestUnknownMethodLikeStdio(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{})
	cs := f.connect(t, aliceTok, "2025-11-25")
	sess := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	r := f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":"x7","method":"foo/bar"}`, merge(auth(aliceTok), sess))
	id, code, msg := rpcError(t, r)
	if r.status != http.StatusOK || code != -32601 || string(id) != `"x7"` || !strings.Contains(msg, "foo/bar") {
		t.Errorf("unknown method: %d code %d id %s %q, want 200 -32601 \"x7\"", r.status, code, id, msg)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	// Known methods still work in the same session.
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("tools/list after the unknown method: %v", err)
	}
}

// TestCORS: a browser on an allowed origin gets its preflight answered
// before authentication and can read Mcp-Session-Id; other origins get 403
// on the preflight too.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app = "https://app.example.com"
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{AllowedOrigins: []string{app}}})
	pre := map[string]string{
		"Origin":                         app,
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version, x-evil",
	}
	r := f.do(t, http.MethodOptions, f.url, "", pre)
	if r.status != http.StatusNoContent {
		t.Fatalf("preflight without a token: %d %q, want 204", r.status, r.body)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != app {
		t.Errorf("preflight Allow-Origin %q", got)
	}
	allowH := r.header.Get("Access-Control-Allow-Headers")
	for _, h := range []string{"authorization", "content-type", "mcp-session-id", "mcp-protocol-version"} {
		if !strings.Contains(allowH, h) {
			t.Errorf("Allow-Headers %q misses %s", allowH, h)
		}
	}
	if strings.Contains(allowH, "x-evil") {
		t.Errorf("Allow-Headers %q allows a header no MCP client needs", allowH)
	}
	if m := r.header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") || !strings.Contains(m, "DELETE") {
		t.Errorf("Allow-Methods %q", m)
	}
	if r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("Allow-Credentials set; nothing here uses cookies")
	}
	evil := merge(pre, map[string]string{"Origin": "https://evil.example"})
	if r := f.do(t, http.MethodOptions, f.url, "", evil); r.status != http.StatusForbidden || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from an evil origin: %d, Allow-Origin %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	// The actual request: the browser may read the session id.
	r = f.do(t, http.MethodPost, f.url, initBody, merge(auth(aliceTok), map[string]string{"Origin": app}))
	if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") || r.header.Get("Mcp-Session-Id") == "" {
		t.Errorf("POST initialize from %s: %d, Allow-Origin %q, Expose %q", app, r.status,
			r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Access-Control-Expose-Headers"))
	}
	if sid := r.header.Get("Mcp-Session-Id"); sid != "" {
		f.do(t, http.MethodDelete, f.url, "", merge(auth(aliceTok), map[string]string{"Origin": app, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}))
	}
	// A 401 is readable by the page too (it learns to authenticate).
	r = f.do(t, http.MethodPost, f.url, initBody, map[string]string{"Origin": app})
	if r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("401 from %s: %d, Allow-Origin %q", app, r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("the fake Proxmox saw %d requests", n)
	}
}
