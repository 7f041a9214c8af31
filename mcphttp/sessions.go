package mcphttp

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxSessionsPerIdentity caps the sessions one identity (one token)
// may hold open at a time. A client needs one per connection; a few dozen
// covers an agent host with many conversations. Without a cap, a single
// token could open thousands of sessions, each kept for the idle timeout
// with its goroutines and buffers.
const DefaultMaxSessionsPerIdentity = 64

// sessions remembers the sessions this handler created and whose they are,
// so Shutdown closes this handler's sessions and no other transport's, and
// so the per-identity cap can be enforced.
type sessions struct {
	server *mcp.Server
	limit  int // <= 0: no limit
	// prunable: the server's session list tells which sessions still live.
	// Not so for legacy SSE sessions, which go-sdk gives no ID; the SSE
	// handler calls forget when a stream ends instead.
	prunable bool

	mu      sync.Mutex
	owner   map[string]string // session id → identity
	count   map[string]int    // identity → live sessions (as far as we know)
	pending map[string]int    // identity → session-creating requests in flight
	pruneAt int
}

func newSessions(server *mcp.Server, limit int, prunable bool) *sessions {
	return &sessions{server: server, limit: limit, prunable: prunable, owner: map[string]string{},
		count: map[string]int{}, pending: map[string]int{}, pruneAt: 1024}
}

// identity is the verified token's user, or "" without authentication.
func identity(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// reserve claims a place for a session the request may create. It returns
// an error message when the identity is at its limit; otherwise the caller
// must call done with the id of the session created ("" for none).
func (s *sessions) reserve(who string) (done func(id string), refusal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && s.count[who]+s.pending[who] >= s.limit {
		s.pruneLocked() // sessions end by DELETE or timeout without telling us
		if n := s.count[who] + s.pending[who]; n >= s.limit {
			return nil, fmt.Sprintf("too many open sessions for this identity (limit %d): close sessions you no longer use (HTTP DELETE with their Mcp-Session-Id) or wait until idle ones expire; no session was created", s.limit)
		}
	}
	s.pending[who]++
	return func(id string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pending[who]--; s.pending[who] == 0 {
			delete(s.pending, who)
		}
		if id == "" {
			return
		}
		if _, dup := s.owner[id]; !dup {
			s.owner[id] = who
			s.count[who]++
		}
		if len(s.owner) >= s.pruneAt {
			s.pruneLocked()
			s.pruneAt = max(1024, 2*len(s.owner))
		}
	}, ""
}

// forget drops a session that ended (SSE: its stream closed).
func (s *sessions) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if who, ok := s.owner[id]; ok {
		delete(s.owner, id)
		if s.count[who]--; s.count[who] <= 0 {
			delete(s.count, who)
		}
	}
}

// pruneLocked forgets sessions the server no longer has.
func (s *sessions) pruneLocked() {
	if !s.prunable {
		return
	}
	live := map[string]bool{}
	for ss := range s.server.Sessions() {
		live[ss.ID()] = true
	}
	for id, who := range s.owner {
		if !live[id] {
			delete(s.owner, id)
			if s.count[who]--; s.count[who] <= 0 {
				delete(s.count, who)
			}
		}
	}
}

// takeAll forgets every session and returns the live ones, for Shutdown.
func (s *sessions) takeAll() []*mcp.ServerSession {
	s.mu.Lock()
	ids := s.owner
	s.owner, s.count = map[string]string{}, map[string]int{}
	s.mu.Unlock()
	var out []*mcp.ServerSession
	for ss := range s.server.Sessions() {
		if _, ok := ids[ss.ID()]; ok {
			out = append(out, ss)
		}
	}
	return out
}
