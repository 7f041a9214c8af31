package proxmoxsafe

import "github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"

// The gateway's path rules and deny list, as the library applies them
// before anything is sent: the tables and their matching are
// internal/routes, which the transport guard checks again on every request
// that leaves the client (transport.go).

// Bounds of a gateway path ([APIGetInput.Path], [APIRequestInput.Path]).
const (
	// MaxGatewayPathLen caps a path in bytes; the longest real API paths
	// (a task log with a token user's UPID) are under 200.
	MaxGatewayPathLen = routes.MaxPathLen
	// MaxGatewaySegments caps the number of segments; Proxmox's deepest
	// paths have 9.
	MaxGatewaySegments = routes.MaxSegments
)

// parseGatewayPath checks a caller's API path against the gateway's path
// rules ([routes.ParsePath]) and returns its segments, unescaped; the
// error names the path field and what was wrong with it.
func parseGatewayPath(p string) ([]string, error) {
	segs, problem := routes.ParsePath(p)
	if problem != "" {
		return nil, &ValidationError{Fields: []FieldError{{Field: "path", Problem: problem}}}
	}
	return segs, nil
}

// gatewayCanonical is the path as the approval phrase, the audit record
// and the result name it ([routes.Canonical]).
func gatewayCanonical(segs []string) string { return routes.Canonical(segs) }

// deniedBy returns the deny-list rule that denies method on the path's
// unescaped segments, or nil.
func deniedBy(method string, segs []string) *routes.DenyRule { return routes.DeniedBy(method, segs) }

// deniedRefusal is the refusal for a denied request.
func deniedRefusal(method string, path string, r *routes.DenyRule) *RefusalError {
	return refuse(ErrNotAllowed, "%s %s is on the gateway's deny list (%s: %s); no class or approval can allow it, and no request was sent",
		method, truncate(path, 120), r.Pattern, r.Why)
}

// DeniedGatewayRoutes returns the gateway's deny list as "METHODS pattern:
// reason" lines, in table order, for documentation and doctor output.
func DeniedGatewayRoutes() []string { return routes.DenyLines() }
