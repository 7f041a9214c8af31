package routes

import (
	"slices"
	"strings"
)

// gatewayRoute lets through the gateway's requests: one of methods, on a
// path whose every segment holds only the bytes the gateway's path rules
// allow ([SegmentByte]), and whose node (/nodes/{node}/…) is in nodes. The
// deny list is checked before any route ([Allowlist.Check]), so it is not
// repeated here.
func gatewayRoute(nodes map[string]bool, methods ...string) Route {
	return Route{match: func(method string, segs []string) bool {
		if !slices.Contains(methods, method) || len(segs) == 0 || len(segs) > MaxSegments {
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
