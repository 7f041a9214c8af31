package proxmoxsafe

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Path-segment patterns for the guard. They are tighter than what the
// validators accept would need: a segment that only validated input can
// produce, so an escaping bug cannot smuggle a different route through.
const (
	segNode = `[A-Za-z0-9-]+`
	segType = `(qemu|lxc)`
	segVMID = `[0-9]+`
	// url.PathEscape writes the "!" of token users ("u@pve!tok") as %21.
	segUPID = `UPID:([A-Za-z0-9:@._-]|%21)+`
	// pve-storage-id.
	segStorage = `[A-Za-z][A-Za-z0-9._-]*`
	// pve-configid (a snapshot name).
	segSnap = `[A-Za-z][A-Za-z0-9_-]*`
)

// route is one (method, path pattern) pair the guard lets through. The
// pattern is compiled on the guard's first request, not at package init:
// a server answers initialize and tools/list without any upstream request,
// and the ~30 patterns were most of this package's start-up (issue 14).
type route struct {
	method string
	// prefix is the pattern's literal beginning: every path the pattern
	// matches starts with it, so a path that does not is refused by this
	// route without compiling its pattern (the first request compiled
	// every pattern listed before the one it matched: about 20 for the
	// privilege check's /access/permissions, issue 14).
	prefix string
	re     func() *regexp.Regexp
	// match, when set, replaces method and re: the gateway's routes
	// (gatewayRoute) match any method of a set and any well-formed path.
	match func(method string, segs []string) bool
	// query, when set, lists the only query parameters the route may
	// carry (destroy: never skiplock, never force).
	query []string
}

func mkRoute(method, pattern string) route {
	return route{method: method, prefix: literalPrefix(pattern),
		re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + pattern + "$") })}
}

// literalPrefix returns the literal text pattern begins with: up to its
// first metacharacter, without the character before it when that one is
// made optional (*, ?, {). A pattern with an alternative outside every
// group has none. TestRoutePrefixes checks each route's against the
// compiled pattern's own LiteralPrefix.
func literalPrefix(pattern string) string {
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(pattern) && pattern[i] != ']'; i++ {
			}
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				return ""
			}
		}
	}
	i := strings.IndexAny(pattern, `\.+*?()|[]{}^$`)
	if i < 0 {
		return pattern
	}
	if i > 0 && strings.IndexByte("*?{", pattern[i]) >= 0 {
		i--
	}
	return pattern[:i]
}

// readRoutes are the GET requests every operation may need.
var readRoutes = []route{
	mkRoute(http.MethodGet, `/version`),
	mkRoute(http.MethodGet, `/cluster/status`),
	mkRoute(http.MethodGet, `/cluster/resources`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/current`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks/`+segUPID+`/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks/`+segUPID+`/log`),
	// Wider read coverage: guest config (redacted by the library), tasks,
	// storage and backups, Ceph, HA, the token's own permissions. Nothing
	// here can read a secret Proxmox does not already mask, except the
	// guest config, which the library redacts before returning it.
	mkRoute(http.MethodGet, `/nodes`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/config`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks`),
	mkRoute(http.MethodGet, `/storage`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/storage`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/storage/`+segStorage+`/content`),
	mkRoute(http.MethodGet, `/cluster/ceph/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/ceph/status`),
	mkRoute(http.MethodGet, `/cluster/ha/status/current`),
	mkRoute(http.MethodGet, `/cluster/ha/resources`),
	mkRoute(http.MethodGet, `/access/permissions`),
	// The next free VMID, and whether a given one is free (provision).
	mkRoute(http.MethodGet, `/cluster/nextid`),
}

// classRoutes are the mutating requests each class needs, and nothing more.
var classRoutes = map[Class][]route{
	ClassPower: {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/(start|shutdown|reboot|stop)`),
	},
	ClassSnapshot: {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot`),
	},
	ClassSnapshotAdmin: {
		mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap+`/rollback`),
	},
	// Suspend and resume exist for containers too, but only QEMU is
	// offered (see power_extra.go).
	ClassPowerExtra: {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/status/(suspend|resume)`),
	},
	// DELETE of the guest itself, with no parameter but the two the
	// library sends: never skiplock (ignore locks) nor force (destroy a
	// running container).
	ClassDestroy: {
		withQuery(mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID), "purge", "destroy-unreferenced-disks"),
	},
	// Clone a guest; create a VM or a container.
	ClassProvision: {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/clone`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType),
	},
	// A migration reads Proxmox's own precheck (a GET, but only the class
	// needs it) and sends one POST.
	ClassMigrate: {
		withQuery(mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/migrate`), "target"),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/migrate`),
	},
	// Grow a disk; set config keys (a VM through the asynchronous POST,
	// a container through PUT, the only method pve-container has).
	ClassConfig: {
		// Current and pending values: the fresh state and the proof.
		mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/pending`),
		mkRoute(http.MethodPut, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/resize`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/config`),
		mkRoute(http.MethodPut, `/nodes/`+segNode+`/lxc/`+segVMID+`/config`),
	},
	// The responder's guarded operations. agent/ping is a POST but changes
	// nothing: it is how ResetGuest learns whether the guest still answers.
	ClassResponder: {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/(start|reboot)`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/status/reset`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/agent/ping`),
		mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap),
	},
}

// withQuery limits r to the query parameters named.
func withQuery(r route, keys ...string) route {
	r.query = keys
	return r
}

// queryAllowed reports whether every query parameter of q is one the
// route allows.
func (r route) queryAllowed(q url.Values) bool {
	if r.query == nil {
		return true
	}
	for k := range q {
		if !slices.Contains(r.query, k) {
			return false
		}
	}
	return true
}

// loginRoute is the ticket login, allowed only with Username/Password
// authentication, in read-only mode too: it changes nothing on the cluster.
var loginRoute = mkRoute(http.MethodPost, `/access/ticket`)

func (p *policy) allowedRoutes() []route {
	out := append([]route(nil), readRoutes...)
	for _, cl := range classOrder {
		if p.classes[cl] {
			out = append(out, classRoutes[cl]...)
		}
	}
	if p.classes[ClassGateway] {
		out = append(out, gatewayRoute(p, http.MethodGet))
	}
	if p.classes[ClassGatewayWrite] {
		out = append(out, gatewayRoute(p, http.MethodPost, http.MethodPut, http.MethodDelete))
	}
	return out
}

// gatewayRoute lets through the gateway's requests: one of methods, on a
// path whose every segment holds only the bytes the gateway's path rules
// allow, and whose node (/nodes/{node}/…) is on the allowlist. The deny
// list is checked before any route (guard.check), so it is not repeated
// here.
func gatewayRoute(p *policy, methods ...string) route {
	return route{match: func(method string, segs []string) bool {
		if !slices.Contains(methods, method) || len(segs) == 0 || len(segs) > MaxGatewaySegments {
			return false
		}
		for _, s := range segs {
			for i := 0; i < len(s); i++ {
				if !segmentByte[s[i]] {
					return false
				}
			}
		}
		return !strings.EqualFold(segs[0], "nodes") || len(segs) < 2 || p.nodes[segs[1]]
	}}
}

// guard is the last line of defence: an http.RoundTripper that lets through
// only the routes the enabled classes need. In read-only mode only GETs pass,
// and the ticket login when the client authenticates with a password.
// It runs before any byte reaches the network.
type guard struct {
	next     http.RoundTripper
	basePath string // "/api2/json"
	allow    []route
	// login lets the ticket login through (loginRoute), which the deny
	// list would refuse like any other /access write.
	login bool
}

// RoundTrip implements http.RoundTripper.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.check(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return g.next.RoundTrip(req)
}

func (g *guard) check(req *http.Request) error {
	p := req.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, g.basePath)
	if ok && strings.HasPrefix(rest, "/") {
		if g.login && loginRoute.method == req.Method && strings.HasPrefix(rest, loginRoute.prefix) && loginRoute.re().MatchString(rest) {
			return nil
		}
		segs, why := guardSegments(rest)
		if why != "" {
			return refuse(ErrNotAllowed, "%s %s has %s (transport guard); it was not sent", req.Method, truncate(p, 120), why)
		}
		// The deny list wins over every route (gateway_deny.go).
		if rule := deniedBy(req.Method, segs); rule != nil {
			return refuse(ErrNotAllowed, "%s %s is on the gateway's deny list (%s: %s; transport guard); it was not sent", req.Method, truncate(p, 120), rule.pattern, rule.why)
		}
		for _, r := range g.allow {
			if r.match != nil {
				if r.match(req.Method, segs) {
					return nil
				}
				continue
			}
			if r.method == req.Method && strings.HasPrefix(rest, r.prefix) && r.re().MatchString(rest) && r.queryAllowed(req.URL.Query()) {
				return nil
			}
		}
	}
	return refuse(ErrNotAllowed, "%s %s is not a request the enabled policy allows (transport guard); it was not sent", req.Method, truncate(p, 120))
}

// guardSegments splits an escaped API path into unescaped segments, on its
// own rather than trusting how the request was built: a segment that does
// not unescape, is empty, is made of dots or hides a "/" (an encoded
// slash, once unescaped) makes the path unusable, and why says so.
func guardSegments(escaped string) (segs []string, why string) {
	for _, s := range strings.Split(escaped[1:], "/") {
		u, err := url.PathUnescape(s)
		switch {
		case err != nil:
			return nil, "a segment that does not unescape"
		case u == "":
			return nil, "an empty segment"
		case strings.Trim(u, ".") == "":
			return nil, "a dot segment"
		case strings.ContainsAny(u, "/\\"):
			return nil, "an encoded slash or backslash"
		}
		segs = append(segs, u)
	}
	return segs, ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
