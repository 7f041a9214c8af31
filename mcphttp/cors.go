package mcphttp

import (
	"net/http"
	"strings"
)

// CORS for the allowed origins (Options.AllowedOrigins), so that a browser
// client on such an origin can use the endpoint. The origin check has already
// refused every other origin with 403, so these headers are only ever
// sent to an origin the operator listed (or the bound loopback origin).
//
// No Access-Control-Allow-Credentials: the bearer token travels in the
// Authorization header, which CORS allows without credentials mode, and
// nothing here uses cookies.
const (
	corsAllowMethods  = "GET, POST, DELETE"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
	corsMaxAge        = "600"
)

// corsAllowedHeaders are the request headers an MCP client sends; the
// 2026-07-28 revision adds Mcp-Param-<name> headers, matched by prefix.
var corsAllowedHeaders = map[string]bool{
	"authorization": true, "content-type": true, "accept": true,
	"mcp-session-id": true, "mcp-protocol-version": true, "last-event-id": true,
	"mcp-method": true, "mcp-name": true,
}

// corsHeaders adds the CORS response headers for an allowed origin and
// answers a preflight (OPTIONS with Access-Control-Request-Method), which
// it reports by returning true. Headers the browser asks for that an MCP
// client never needs are left out of the answer, so the browser refuses
// the request itself.
func corsHeaders(w http.ResponseWriter, r *http.Request, origin string) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	var allow []string
	for _, line := range r.Header.Values("Access-Control-Request-Headers") {
		for name := range strings.SplitSeq(line, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if corsAllowedHeaders[name] || (strings.HasPrefix(name, "mcp-param-") && len(name) > len("mcp-param-")) {
				allow = append(allow, name)
			}
		}
	}
	if len(allow) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(allow, ", "))
	}
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}
