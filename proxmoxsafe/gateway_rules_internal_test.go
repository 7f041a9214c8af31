package proxmoxsafe

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"
)

// TestGatewayRules: the library's form of the gateway's path rules and
// deny list (internal/routes): a bad path is a ValidationError on the path
// field with the rule's problem, a denied request a not-allowed refusal
// naming the rule, and the documented list is the table.
func TestGatewayRules(t *testing.T) {
	t.Parallel()
	segs, err := parseGatewayPath("/cluster/resources")
	if err != nil || gatewayCanonical(segs) != "/cluster/resources" {
		t.Errorf("parseGatewayPath = %q, %v", segs, err)
	}
	_, err = parseGatewayPath("/x?y")
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidInput) || len(ve.Fields) != 1 || ve.Fields[0].Field != "path" || !strings.Contains(ve.Fields[0].Problem, "query string") {
		t.Errorf("err = %v, want a ValidationError on path", err)
	}
	rule := deniedBy("PUT", []string{"access", "acl"})
	if rule == nil {
		t.Fatal("PUT /access/acl is not denied")
	}
	err = deniedRefusal("PUT", "/access/acl", rule)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "deny list (/access/**: ") || !strings.Contains(err.Error(), "no request was sent") {
		t.Errorf("refusal = %v", err)
	}
	if deniedBy("GET", []string{"access", "acl"}) != nil {
		t.Error("GET /access/acl is denied")
	}
	if got := DeniedGatewayRoutes(); !slices.Equal(got, routes.DenyLines()) || len(got) != len(routes.DenyRules()) {
		t.Errorf("DeniedGatewayRoutes has %d lines, the table %d rules", len(got), len(routes.DenyRules()))
	}
	if MaxGatewayPathLen != 256 || MaxGatewaySegments != 12 {
		t.Errorf("bounds %d, %d", MaxGatewayPathLen, MaxGatewaySegments)
	}
}

// expand turns a deny pattern into concrete paths: "*" becomes a value
// that fits (pve1, 100, local), each "a|b" every alternative, a final
// "**" nothing and two more segments.
func expand(pattern string) []string {
	out := []string{""}
	for i, p := range strings.Split(pattern[1:], "/") {
		var alts []string
		switch {
		case p == "**":
			var next []string
			for _, o := range out {
				next = append(next, o, o+"/x/y")
			}
			return next
		case p == "*" && i == 1:
			alts = []string{"pve1"}
		case p == "*" && i == 3:
			alts = []string{"100"}
		case p == "*":
			alts = []string{"local"}
		default:
			alts = strings.Split(p, "|")
		}
		var next []string
		for _, o := range out {
			for _, a := range alts {
				next = append(next, o+"/"+a)
			}
		}
		out = next
	}
	return out
}

// TestGatewayGuardDenyTable: the transport guard refuses every request on
// the deny list by itself — raw requests, below the library's checks —
// with every class enabled; and the library refuses the same before any
// request. Every row of the table is expanded, so a new row is covered.
func TestGatewayGuardDenyTable(t *testing.T) {
	t.Parallel()
	c, net := gatewayClient(t, false)
	n := 0
	for _, r := range routes.DenyRules() {
		methods := []string{http.MethodPost, http.MethodPut, http.MethodDelete}
		if r.Scope == routes.DenyAll {
			methods = append(methods, http.MethodGet)
		}
		for _, p := range expand(r.Pattern) {
			for _, m := range methods {
				n++
				err := c.api.Do(t.Context(), m, pve.Path(strings.Split(p[1:], "/")...), url.Values{}, nil)
				if got := net.take(); len(got) != 0 || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "deny list") {
					t.Errorf("guard: %s %s reached %v, err %v; want a deny-list refusal and nothing sent", m, p, got, err)
				}
				if m == http.MethodGet {
					_, err = c.APIGet(t.Context(), APIGetInput{Path: p})
				} else {
					_, err = c.APIRequest(t.Context(), APIRequestInput{Method: m, Path: p})
				}
				if got := net.take(); len(got) != 0 || !errors.Is(err, ErrNotAllowed) {
					t.Errorf("library: %s %s reached %v, err %v; want a refusal and nothing sent", m, p, got, err)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d denied requests checked", n)
	}
}

// FuzzGatewayPath: for any path the gateway accepts, the request that
// leaves the client (through the guard, escaped) carries exactly the
// segments checked, and never one on the deny list; a path the library
// refuses reaches nothing. Seeds: testdata/fuzz/FuzzGatewayPath.
func FuzzGatewayPath(f *testing.F) {
	for _, s := range []string{"/cluster/resources", "/nodes/pve1/qemu/100/config", "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:a@pve!tok:/status",
		"/cluster/ha/resources/vm:100", "/access/users/u@pve", "/nodes/pve1/qemu/100/agent/exec", "/nodes/%2e%2e/access", "/a/../b", "//x", "/x?y", "/pools/a,b+c=d~e"} {
		f.Add(s)
	}
	c, net := gatewayClient(f, false)
	f.Fuzz(func(t *testing.T, p string) {
		segs, perr := parseGatewayPath(p)
		if perr == nil {
			if gatewayCanonical(segs) != p {
				t.Fatalf("canonical %q != input %q", gatewayCanonical(segs), p)
			}
			got, why := routes.Segments(pve.Path(segs...))
			if why != "" || !slices.Equal(got, segs) {
				t.Fatalf("escaped %q splits to %q (%s), want %q", pve.Path(segs...), got, why, segs)
			}
		}
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			var err error
			if m == http.MethodGet {
				_, err = c.APIGet(t.Context(), APIGetInput{Path: p})
			} else {
				_, err = c.APIRequest(t.Context(), APIRequestInput{Method: m, Path: p})
			}
			sent := net.take()
			if perr != nil || errors.Is(err, ErrNotAllowed) || errors.Is(err, ErrInvalidInput) {
				if len(sent) != 0 {
					t.Fatalf("%s %q refused (%v) but sent %v", m, p, err, sent)
				}
				continue
			}
			if len(sent) != 1 {
				t.Fatalf("%s %q: sent %v (err %v), want exactly one request", m, p, sent, err)
			}
			gotMethod, escaped, _ := strings.Cut(sent[0], " ")
			rest, ok := strings.CutPrefix(escaped, "/api2/json")
			got, why := routes.Segments(rest)
			if gotMethod != m || !ok || why != "" || !slices.Equal(got, segs) {
				t.Fatalf("%s %q went out as %q, segments %q, want %q", m, p, sent[0], got, segs)
			}
			if r := deniedBy(m, got); r != nil {
				t.Fatalf("%s %q went out although %s denies it", m, p, r.Pattern)
			}
		}
	})
}
