package mcphttp

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSSEPath is where [Options.LegacySSE] serves when Path is "", the
// path clients of the legacy transport usually expect.
const DefaultSSEPath = "/sse"

// sseHandler serves the legacy HTTP+SSE transport (protocol 2024-11-05:
// a GET opens the session's event stream, whose first event names the URL
// to POST messages to) with go-sdk's [mcp.SSEServerTransport].
//
// It does what go-sdk's own [mcp.SSEHandler] does, plus what that handler
// lacks and streamable HTTP has: each session is bound to the identity
// that opened it (another identity's POST gets 403), sessions count
// against the per-identity cap, and Shutdown can close them. Everything
// in front of it (Origin, Host, CORS, bearer token, body limits and
// deadline, in-flight bound) is the same as for streamable HTTP.
type sseHandler struct {
	h *Handler

	mu     sync.Mutex
	conns  map[string]*sseConn
	closed bool // closeAll ran: a session connected after it closes itself
}

// sseConnected runs between a session's Connect and its registration for
// closeAll; tests use it to hold a session in that window.
var sseConnected = func() {}

type sseConn struct {
	t     *mcp.SSEServerTransport
	owner string
	ss    *mcp.ServerSession // nil until connected
}

func newSSEHandler(h *Handler) *sseHandler {
	return &sseHandler{h: h, conns: map[string]*sseConn{}}
}

func (s *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.open(w, r)
	case http.MethodPost:
		s.post(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "the legacy SSE transport takes GET (open a session) and POST (send a message)")
	}
}

// open starts a session and serves its event stream until the client
// goes away or the session is closed.
func (s *sseHandler) open(w http.ResponseWriter, r *http.Request) {
	s.h.mu.Lock()
	closing := s.h.closing
	s.h.mu.Unlock()
	if closing {
		writeError(w, http.StatusServiceUnavailable, "server is shutting down")
		return
	}
	who := identity(r)
	done, refusal := s.h.sessions.reserve(who)
	if refusal != "" {
		s.h.reject(w, r, http.StatusTooManyRequests, refusal)
		return
	}
	id := rand.Text()
	done(id)
	defer s.h.sessions.forget(id)

	endpoint := (&url.URL{Path: r.URL.Path, RawQuery: url.Values{"sessionid": {id}}.Encode()}).RequestURI()
	c := &sseConn{owner: who, t: &mcp.SSEServerTransport{Endpoint: endpoint, Response: w, MaxRequestBodyBytes: s.h.maxBody}}
	s.mu.Lock()
	s.conns[id] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, id)
		s.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // a proxy must not hold events back
	// The connection holds back the answers to requests the client
	// cancelled (cancel.go).
	ss, err := s.h.server.Connect(r.Context(), cancelTransport{c.t}, nil)
	if err != nil {
		s.h.log.Warn("SSE session failed to start", "error", err.Error())
		writeError(w, http.StatusInternalServerError, "the session could not be started")
		return
	}
	sseConnected()
	s.mu.Lock()
	c.ss = ss
	closed := s.closed
	s.mu.Unlock()
	if closed {
		// Shutdown's closeAll ran after Connect had sent the endpoint
		// event (the client already has its 200) but before ss was
		// registered: it could not close this session, so close it here,
		// or its stream would outlive Shutdown.
		_ = ss.Close()
	}
	ended := make(chan struct{})
	go func() {
		_ = ss.Wait()
		close(ended)
	}()
	select {
	case <-r.Context().Done():
	case <-ended:
	}
	_ = ss.Close()
	<-ended
}

// post hands a message to its session, if it belongs to the caller.
func (s *sseHandler) post(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		writeError(w, http.StatusBadRequest, "sessionid is missing: POST to the URL of the session's endpoint event")
		return
	}
	s.mu.Lock()
	c := s.conns[id]
	s.mu.Unlock()
	switch {
	case c == nil:
		writeError(w, http.StatusNotFound, "session not found")
	case c.owner != identity(r):
		s.h.reject(w, r, http.StatusForbidden, "the session belongs to another identity")
	default:
		c.t.ServeHTTP(w, r)
	}
}

// closeAll closes every session, which ends their event streams.
func (s *sseHandler) closeAll() {
	s.mu.Lock()
	s.closed = true
	var all []*mcp.ServerSession
	for _, c := range s.conns {
		if c.ss != nil {
			all = append(all, c.ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range all {
		_ = ss.Close()
	}
}
