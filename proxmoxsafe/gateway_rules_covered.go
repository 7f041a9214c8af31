package proxmoxsafe

import (
	"net/url"
	"strings"
	"sync"
)

// A gateway write that a dedicated operation covers is refused, naming
// the operation: sent through the gateway it would be approved at the
// gateway-write class's level instead of the operation's (a phrase the
// model types instead of the person the destroy class requires), and none
// of the operation's preconditions or key rules would run (a destroy of a
// running guest, of one with Proxmox's protection flag, a config write of
// a never-key). Holding the gateway to each operation's level and every
// precondition instead would be a second implementation of every
// operation; refusing is the simplest rule that cannot be weaker.
//
// What "covers" means is derived from the declarations (operations.go):
// every mutation's declared route, whatever the write method (PUT of a
// VM's config is the synchronous twin of the POST the config class
// sends), so a new operation is covered as soon as it is declared. A few
// requests reach the same effect by another route (an HA resource's
// state starts and stops its guest, HA migrate moves it): they are listed
// in gatewayEquivalents with the operation they are equivalent to.

// coveredRoute is one declared mutating route, split into segments.
type coveredRoute struct {
	op   *operation
	segs []string
}

// coveredRoutes is every mutation's declared route, built once from the
// one list of operations.
var coveredRoutes = sync.OnceValue(func() []coveredRoute {
	var out []coveredRoute
	for _, op := range operations {
		in := op.info
		if in.Class == "" || in.Class == ClassGateway || in.Class == ClassGatewayWrite || in.Method == "GET" || in.Route == "" {
			continue
		}
		out = append(out, coveredRoute{op: op, segs: strings.Split(strings.TrimPrefix(in.Route, "/"), "/")})
	}
	return out
})

// routeSegMatch reports whether a path segment fits a declared route's
// segment: a literal (case ignored: over-refusing is the safe mistake),
// {type} (qemu or lxc), {vmid} (digits) or any other {placeholder} (any
// segment: {action} covers every status/… write, power actions the
// operations do not offer, such as a container's suspend, included).
func routeSegMatch(pat, seg string) bool {
	switch {
	case pat == "{type}":
		return strings.EqualFold(seg, "qemu") || strings.EqualFold(seg, "lxc")
	case pat == "{vmid}":
		return seg != "" && strings.Trim(seg, "0123456789") == ""
	case strings.HasPrefix(pat, "{"):
		return seg != ""
	}
	return strings.EqualFold(pat, seg)
}

// gatewayEquivalent is a request that has the effect of a dedicated
// operation by another route.
type gatewayEquivalent struct {
	method string
	// segs is the path; "*" is any one segment.
	segs []string
	op   Operation
	// when, if set, limits the rule to requests with these parameters.
	when func(url.Values) bool
	why  string
}

// haStateChanges reports whether an HA resource write sets a state that
// makes the HA manager start or stop the guest: any state but "ignored"
// (started, stopped, disabled, enabled). A new resource without a state
// is "started".
func haStateChanges(create bool) func(url.Values) bool {
	return func(v url.Values) bool {
		st, ok := v["state"]
		if !ok {
			return create
		}
		return len(st) != 1 || !strings.EqualFold(st[0], "ignored")
	}
}

// stopMode reports whether a backup run or job is in stop mode.
func stopMode(v url.Values) bool { return strings.EqualFold(strings.TrimSpace(v.Get("mode")), "stop") }

// gatewayEquivalents are the requests equivalent to a dedicated
// operation (see the file comment).
var gatewayEquivalents = []gatewayEquivalent{
	{"POST", []string{"cluster", "ha", "resources"}, OpGuestPower, haStateChanges(true),
		"the HA manager starts or stops the guest to reach the resource's state (a new resource is started unless its state is ignored)"},
	{"PUT", []string{"cluster", "ha", "resources", "*"}, OpGuestPower, haStateChanges(false),
		"the HA manager starts or stops the guest to reach the state"},
	{"POST", []string{"cluster", "ha", "resources", "*", "migrate"}, OpMigrateGuest, nil, "the HA manager migrates the guest"},
	{"POST", []string{"cluster", "backup"}, OpGuestPower, stopMode, "a backup job in stop mode shuts each guest down and starts it again, at every run"},
	{"POST", []string{"cluster", "ha", "resources", "*", "relocate"}, OpMigrateGuest, nil, "the HA manager moves the guest (stopped, then started on the node)"},
}

// coverage is what covers one gateway write: the operations, and for an
// equivalent route why it is one.
type coverage struct {
	ops []*operation
	why string
}

// gatewayCoverage returns what covers a write of method on segs with
// params: the operations whose declared route the path is, or the one an
// equivalent request has the effect of. Empty for what no operation
// covers.
func gatewayCoverage(method string, segs []string, params url.Values) coverage {
	var cov coverage
	if method == "GET" {
		return cov
	}
	for _, cr := range coveredRoutes() {
		if len(cr.segs) != len(segs) {
			continue
		}
		ok := true
		for i, p := range cr.segs {
			if !routeSegMatch(p, segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			cov.ops = append(cov.ops, cr.op)
		}
	}
	if len(cov.ops) > 0 {
		return cov
	}
	for _, eq := range gatewayEquivalents {
		if eq.method != method || len(eq.segs) != len(segs) || eq.when != nil && !eq.when(params) {
			continue
		}
		ok := true
		for i, p := range eq.segs {
			if p != "*" && !strings.EqualFold(p, segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			for _, op := range operations {
				if op.info.Name == eq.op {
					cov.ops = append(cov.ops, op)
				}
			}
			cov.why = eq.why
			return cov
		}
	}
	return cov
}

// GatewayCoveredBy returns the operations that cover a gateway write: a
// write [Client.APIRequest] refuses because a dedicated operation sends
// it (its declared route, whatever the write method) or has its effect
// by another route (an HA resource's state, HA migrate and relocate). Nil
// for an invalid request and for what no operation covers. Nothing is
// checked against the operator's policy: the refusal does not depend on
// it.
func GatewayCoveredBy(in APIRequestInput) []Operation {
	segs, err := parseGatewayPath(in.Path)
	if err != nil {
		return nil
	}
	vals, err := checkGatewayParams(in.Params)
	if err != nil {
		return nil
	}
	var out []Operation
	for _, op := range gatewayCoverage(in.Method, segs, vals).ops {
		out = append(out, op.info.Name)
	}
	return out
}

// checkGatewayCovered refuses a write that a dedicated operation covers,
// naming the operation, its class, whether the class is enabled and the
// levels it would be approved at. No request is sent.
func (p *policy) checkGatewayCovered(r *gatewayReq) error {
	cov := gatewayCoverage(r.method, r.segs, r.params)
	if len(cov.ops) == 0 {
		return nil
	}
	var names []string
	for _, op := range cov.ops {
		in := op.info
		s := string(in.Name) + " (class " + string(in.Class)
		if !p.classes[in.Class] {
			s += ", not enabled by the operator"
		} else {
			levels := p.approvalsFor(in.Class)
			ls := make([]string, len(levels))
			for i, l := range levels {
				ls[i] = string(l)
			}
			s += ", approved by " + strings.Join(ls, " or ")
		}
		names = append(names, s+")")
	}
	how := "is what a dedicated operation sends"
	if cov.why != "" {
		how = "has the effect of a dedicated operation (" + cov.why + ")"
	}
	return refuse(ErrNotAllowed, "%s %s %s: %s; the gateway does not send it, since it would be approved at the gateway's level instead of that operation's and skip the operation's preconditions and key rules; use the operation instead",
		r.method, truncate(r.path(), 120), how, strings.Join(names, ", "))
}
