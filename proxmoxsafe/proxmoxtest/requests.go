package proxmoxtest

import (
	"net/http"
	"net/url"
)

// Request is one logged request. Every request is logged, refused ones
// (401, 403, 400, faults) included.
type Request struct {
	Method string
	// Path is the path after /api2/json, unescaped, e.g.
	// "/nodes/pve1/qemu/100/status/current". A request outside /api2/json
	// keeps its full path.
	Path string
	// RawPath is the path after /api2/json as sent (escaped).
	RawPath string
	Query   url.Values
	// Form holds POST/PUT parameters (form or JSON body, decoded to strings;
	// JSON booleans become "1"/"0").
	Form   url.Values
	Header http.Header
}

// Requests returns a copy of the request log, oldest first (the most
// recent [Server.RequestLogLimit] ones when that is set).
func (s *Server) Requests() []Request {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	return append([]Request(nil), s.logged()...)
}

// logged is the log within the limit; the caller holds reqMu.
func (s *Server) logged() []Request {
	if n := s.RequestLogLimit; n > 0 && len(s.requests) > n {
		return s.requests[len(s.requests)-n:]
	}
	return s.requests
}

// MutatingRequests returns the logged requests whose method is not GET or
// HEAD, except the ticket login (POST /access/ticket), which changes
// nothing on the cluster.
func (s *Server) MutatingRequests() []Request {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	var out []Request
	for _, r := range s.logged() {
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !(r.Method == http.MethodPost && r.Path == "/access/ticket") {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	s.requests = nil
}

func (s *Server) logRequest(r Request) {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	s.requests = append(s.requests, r)
	// Trim in batches, so each request costs O(1) on average.
	if n := s.RequestLogLimit; n > 0 && len(s.requests) >= 2*n {
		s.requests = append([]Request(nil), s.requests[len(s.requests)-n:]...)
	}
}
