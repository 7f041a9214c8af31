package routes

import (
	"net/http"
	"slices"
	"strings"
)

// gatewayRoute lets through the gateway's requests: one of methods, on a
// path whose every segment holds only the bytes the gateway's path rules
// allow ([SegmentByte]), and whose node (/nodes/{node}/…) is in nodes. The
// deny list is checked before any route ([Allowlist.Check]), so it is not
// repeated here. A write never passes on a path a class's write route
// describes (classWritePath): the library refuses a gateway write that a
// dedicated operation covers, and should it send one, only that class's
// own route, when the class is enabled, lets it through.
func gatewayRoute(nodes map[string]bool, methods ...string) Route {
	return Route{match: func(method string, segs []string) bool {
		if !slices.Contains(methods, method) || len(segs) == 0 || len(segs) > MaxSegments {
			return false
		}
		if method != http.MethodGet && classWritePath(segs) {
			return false
		}
		for _, s := range segs {
			for i := 0; i < len(s); i++ {
				if !SegmentByte[s[i]] {
					return false
				}
			}
		}
		return !strings.EqualFold(segs[0], "nodes") || len(segs) < 2 || nodes[segs[1]]
	}}
}

// classWritePath reports whether a class's write route (any class, any
// write method) describes the path of these segments. Gateway paths hold
// only SegmentByte bytes, which the class patterns match unescaped.
func classWritePath(segs []string) bool {
	path := "/" + strings.Join(segs, "/")
	for _, rs := range classRoutes {
		for i := range rs {
			r := &rs[i]
			if r.method != http.MethodGet && strings.HasPrefix(path, r.prefix) && r.re().MatchString(path) {
				return true
			}
		}
	}
	return false
}
