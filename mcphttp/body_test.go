package mcphttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// TestRepeatedKeyRequest: a POSTed request that repeats a key outside a
// tool call's arguments (two tool names) is answered Invalid Request with
// its id and never reaches the server; repeated keys in the arguments reach
// the server, which refuses them as invalid input; the bearer token is
// still checked first.
func TestRepeatedKeyRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{Stateless: true}})
	hdr := merge(auth(aliceTok), map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	r := f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_guests","name":"guest_status","arguments":{}}}`, hdr)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"id":3`) || !strings.Contains(r.body, `"code":-32600`) ||
		!strings.Contains(r.body, `the key \"params.name\" appears more than once`) {
		t.Errorf("repeated tool name: %d %q", r.status, r.body)
	}
	r = f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}`, hdr)
	if !strings.Contains(r.body, `"id":null`) || !strings.Contains(r.body, `"code":-32600`) {
		t.Errorf("repeated id: %d %q", r.status, r.body)
	}
	if got := f.fake.Requests(); len(got) != 0 {
		t.Errorf("requests to Proxmox: %v", got)
	}
	r = f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_guests","arguments":{"node":"pve1","node":"pve2"}}}`, hdr)
	if r.status != http.StatusOK || !strings.Contains(r.body, `"isError":true`) || !strings.Contains(r.body, "repeat a key: node: is given more than once") {
		t.Errorf("repeated argument: %d %q", r.status, r.body)
	}
	r = f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":7,"id":8,"method":"ping"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if r.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d %q, want 401", r.status, r.body)
	}
}

// TestRepeatedKeyRequestSSE: over the legacy SSE transport, whose answers
// go out on the event stream, a POST that repeats a key outside the
// arguments is refused itself (400, saying which key) and never reaches
// the server or Proxmox.
func TestRepeatedKeyRequestSSE(t *testing.T) {
	t.Parallel()
	f := newTransportFixture(t, transports[1], mcphttp.Options{}, nil)
	status, endpoint, _, end := openSSE(t, f, auth(aliceTok))
	if status != http.StatusOK {
		t.Fatalf("SSE stream: %d", status)
	}
	defer end()
	r := f.do(t, http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_guests","name":"guest_status","arguments":{}}}`, auth(aliceTok))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, `the key \"params.name\" appears more than once`) {
		t.Errorf("repeated tool name over SSE: %d %q", r.status, r.body)
	}
	if got := f.fake.Requests(); len(got) != 0 {
		t.Errorf("requests to Proxmox: %v", got)
	}
}
