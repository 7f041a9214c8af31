package routes

import (
	"net/http"
	"testing"
)

// TestAllowlistCheck: what Check decides for each kind of request; the
// library's TestTransportGuard* tables cover every class through the
// Client.
func TestAllowlistCheck(t *testing.T) {
	t.Parallel()
	nodes := map[string]bool{"pve1": true}
	none := NewAllowlist(nil, nodes, false)
	login := NewAllowlist(nil, nodes, true)
	power := NewAllowlist([]string{"power"}, nodes, false)
	gw := NewAllowlist([]string{"gateway"}, nodes, false)
	gww := NewAllowlist([]string{"gateway-write"}, nodes, false)
	unknown := NewAllowlist([]string{"Power", "nope"}, nodes, false)
	allowed, notAllowed := Verdict{Allowed: true}, Verdict{}
	for _, tc := range []struct {
		name         string
		a            *Allowlist
		method, path string
		query        string
		want         Verdict
		denied       string // the pattern of the rule, when denied
	}{
		{"a read", none, "GET", "/version", "", allowed, ""},
		{"a read with a query", none, "GET", "/nodes/pve1/tasks", "limit=5", allowed, ""},
		{"a POST without a class", none, "POST", "/nodes/pve1/qemu/100/status/stop", "", notAllowed, ""},
		{"the class's POST", power, "POST", "/nodes/pve1/qemu/100/status/stop", "", allowed, ""},
		{"not below the base", none, "GET", "version", "", notAllowed, ""},
		{"empty", none, "GET", "", "", notAllowed, ""},
		{"malformed", power, "GET", "/nodes//status", "", Verdict{Malformed: "an empty segment"}, ""},
		{"denied", power, "POST", "/nodes/pve1/qemu/100/agent/exec", "", Verdict{}, "/nodes/*/qemu/*/agent/exec|exec-status|file-read|file-write|set-user-password"},
		{"login without password auth", none, "POST", "/access/ticket", "", Verdict{}, "/access/**"},
		{"login with password auth", login, "POST", "/access/ticket", "", allowed, ""},
		{"GET of the login", login, "GET", "/access/ticket", "", Verdict{}, "/access/ticket"},
		{"gateway GET", gw, "GET", "/pools", "", allowed, ""},
		{"gateway GET on another node", gw, "GET", "/nodes/pve2/qemu", "", notAllowed, ""},
		{"gateway has no write", gw, "POST", "/pools", "", notAllowed, ""},
		{"gateway-write POST", gww, "POST", "/pools", "", allowed, ""},
		{"gateway-write has no GET of its own", gww, "GET", "/pools", "", notAllowed, ""},
		{"a misspelt class opens nothing", unknown, "POST", "/nodes/pve1/qemu/100/status/stop", "", notAllowed, ""},
	} {
		got := tc.a.Check(tc.method, tc.path, tc.query)
		if tc.denied != "" {
			if got.Denied == nil || got.Denied.Pattern != tc.denied || got.Allowed || got.Malformed != "" {
				t.Errorf("%s: Check(%s %s) = %+v, want denied by %s", tc.name, tc.method, tc.path, got, tc.denied)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: Check(%s %s) = %+v, want %+v", tc.name, tc.method, tc.path, got, tc.want)
		}
	}
}

// TestAllowlistKeepsItsNodes: the allowlist copies the node set, so a
// later change to the caller's map opens nothing.
func TestAllowlistKeepsItsNodes(t *testing.T) {
	t.Parallel()
	nodes := map[string]bool{"pve1": true}
	a := NewAllowlist([]string{"gateway"}, nodes, false)
	nodes["pve2"] = true
	if v := a.Check(http.MethodGet, "/nodes/pve2/qemu", ""); v.Allowed {
		t.Error("a node added after NewAllowlist was let through")
	}
}
