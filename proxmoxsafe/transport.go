package proxmoxsafe

import (
	"net/http"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"
)

// guard is the last line of defence: an http.RoundTripper that lets through
// only the routes the enabled classes need (the tables are internal/routes,
// written out there rather than derived from the operations, so that a
// mistake in an operation is stopped below it). In read-only mode only
// GETs pass, and the ticket login when the client authenticates with a
// password. It runs before any byte reaches the network.
type guard struct {
	next     http.RoundTripper
	basePath string // "/api2/json"
	routes   *routes.Allowlist
	// traced: next is an *http.Transport, which reports its connections
	// through httptrace (send_watch.go).
	traced bool
}

// newGuard wraps next in the transport guard of policy p. login lets the
// ticket login through, which the deny list would refuse like any other
// /access write.
func newGuard(next http.RoundTripper, basePath string, p *policy, login bool) *guard {
	var classes []string
	for _, cl := range classOrder {
		if p.classes[cl] {
			classes = append(classes, string(cl))
		}
	}
	_, traced := next.(*http.Transport)
	return &guard{next: next, basePath: basePath, routes: routes.NewAllowlist(classes, p.nodes, login), traced: traced}
}

// RoundTrip implements http.RoundTripper.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.check(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return g.next.RoundTrip(g.watchSend(req))
}

func (g *guard) check(req *http.Request) error {
	p := req.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, g.basePath)
	if ok && strings.HasPrefix(rest, "/") {
		v := g.routes.Check(req.Method, rest, req.URL.RawQuery)
		switch {
		case v.Allowed:
			return nil
		case v.Malformed != "":
			return refuse(ErrNotAllowed, "%s %s has %s (transport guard); it was not sent", req.Method, truncate(p, 120), v.Malformed)
		case v.Denied != nil:
			// The deny list wins over every route.
			return refuse(ErrNotAllowed, "%s %s is on the gateway's deny list (%s: %s; transport guard); it was not sent", req.Method, truncate(p, 120), v.Denied.Pattern, v.Denied.Why)
		}
	}
	return refuse(ErrNotAllowed, "%s %s is not a request the enabled policy allows (transport guard); it was not sent", req.Method, truncate(p, 120))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
