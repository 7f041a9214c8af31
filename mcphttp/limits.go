package mcphttp

import (
	"fmt"
	"net/http"
)

// DefaultMaxInFlight bounds the authenticated requests served at once
// (event-stream GETs excluded: they last a session and are bounded by the
// session cap). Each tool call may hold a Proxmox request and up to the
// wait cap; more than this many at a time is an overload or a runaway
// client, and queueing them would only grow memory and latency. It is
// well above what busy clients need: a go-sdk client sends a notification
// while the previous request's handler may still be finishing, so 64
// clients can briefly hold more than 64 slots (bench/httpload -clients 64
// saw a 503 with a bound of 64).
const DefaultMaxInFlight = 256

// limitInFlight answers 503 with Retry-After when the bound is reached,
// instead of queueing.
func (h *Handler) limitInFlight(next http.Handler) http.Handler {
	if h.slots == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			h.reject(w, r, http.StatusServiceUnavailable, fmt.Sprintf("server busy: %d requests are in flight (the limit); retry shortly", cap(h.slots)))
		}
	})
}

// limitSessions refuses a request that would create a session beyond the
// identity's cap (429), and records the session it creates. Streamable
// HTTP creates sessions on a POST without Mcp-Session-Id.
func (h *Handler) limitSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		done, refusal := h.sessions.reserve(identity(r))
		if refusal != "" {
			h.reject(w, r, http.StatusTooManyRequests, refusal)
			return
		}
		created := ""
		defer func() { done(created) }()
		next.ServeHTTP(w, r)
		created = w.Header().Get("Mcp-Session-Id")
	})
}
