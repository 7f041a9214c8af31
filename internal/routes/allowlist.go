package routes

import (
	"maps"
	"net/http"
	"strings"
)

// Allowlist is the set of requests one policy lets through: every read,
// the routes of each enabled class, and the ticket login when the client
// logs in with a password. It is the transport guard's table; the library
// wraps it in the http.RoundTripper that refuses what [Allowlist.Check]
// does not allow.
type Allowlist struct {
	allow []Route
	// login lets the ticket login through (loginRoute), which the deny
	// list would refuse like any other /access write.
	login bool
}

// NewAllowlist returns the allowlist of a policy that enables classes (by
// name, in the order their routes are tried), on nodes (the gateway's
// routes reach /nodes/{node}/… only for these). login lets the ticket
// login through. A name the tables do not know opens nothing.
func NewAllowlist(classes []string, nodes map[string]bool, login bool) *Allowlist {
	a := &Allowlist{allow: append([]Route(nil), readRoutes...), login: login}
	nodes = maps.Clone(nodes)
	for _, cl := range classes {
		switch cl {
		case classGateway:
			a.allow = append(a.allow, gatewayRoute(nodes, http.MethodGet))
		case classGatewayWrite:
			a.allow = append(a.allow, gatewayRoute(nodes, http.MethodPost, http.MethodPut, http.MethodDelete))
		default:
			a.allow = append(a.allow, classRoutes[cl]...)
		}
	}
	return a
}

// Verdict is what [Allowlist.Check] decided. At most one of its fields is
// set; none means the request is not one the policy allows.
type Verdict struct {
	// Allowed: the request may be sent.
	Allowed bool
	// Malformed says why the path cannot be judged ("an empty segment").
	Malformed string
	// Denied is the deny-list rule the request falls under.
	Denied *DenyRule
}

// Check judges one request: its method, its escaped path below the API
// base (/api2/json), beginning with "/", and its raw query. The deny list
// is checked before every route, the ticket login and the routes marked
// pastDeny apart (one literal route each, of a dedicated operation).
func (a *Allowlist) Check(method, path, rawQuery string) Verdict {
	if !strings.HasPrefix(path, "/") {
		return Verdict{}
	}
	if a.login && loginRoute.allows(method, path, nil, rawQuery) {
		return Verdict{Allowed: true}
	}
	segs, why := Segments(path)
	if why != "" {
		return Verdict{Malformed: why}
	}
	for i := range a.allow {
		if a.allow[i].pastDeny && a.allow[i].allows(method, path, segs, rawQuery) {
			return Verdict{Allowed: true}
		}
	}
	if rule := DeniedBy(method, segs); rule != nil {
		return Verdict{Denied: rule}
	}
	for i := range a.allow {
		if a.allow[i].allows(method, path, segs, rawQuery) {
			return Verdict{Allowed: true}
		}
	}
	return Verdict{}
}
