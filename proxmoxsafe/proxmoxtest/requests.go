package proxmoxtest

import (
	"net/http"
	"net/url"
	"slices"
	"time"
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
	// Start is when the server began serving the request (before any
	// delay), End when it finished (its answer written, or the request
	// abandoned); End is zero while it is still being served. With
	// [Server.Latency], [SequentialDepth] turns them into a count of
	// round trips.
	Start, End time.Time

	seq uint64 // the request's number in the log, for endRequest
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

// logRequest logs r as started now and returns its number for endRequest.
func (s *Server) logRequest(r Request) uint64 {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	s.reqSeq++
	r.seq, r.Start = s.reqSeq, time.Now()
	s.requests = append(s.requests, r)
	// Trim in batches, so each request costs O(1) on average.
	if n := s.RequestLogLimit; n > 0 && len(s.requests) >= 2*n {
		s.requests = append([]Request(nil), s.requests[len(s.requests)-n:]...)
	}
	return r.seq
}

// endRequest marks the request numbered seq as ended now. It is usually
// among the last logged, so the search runs from the end; a request the
// log no longer holds (trimmed, or ResetRequests) is left alone.
func (s *Server) endRequest(seq uint64) {
	now := time.Now()
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if r := &s.requests[i]; r.seq == seq {
			r.End = now
			return
		} else if r.seq < seq {
			return
		}
	}
}

// SequentialDepth is the number of round trips reqs took one after
// another: the longest chain of requests in which each started only after
// the one before had ended. Requests sent at once count once; a request
// still being served (End zero) ends after every other. It counts, it
// does not time: with a [Server.Latency] well above the time a client
// takes to send its next request, requests a client sends at once overlap
// and requests it sends after an answer do not.
func SequentialDepth(reqs []Request) int {
	sorted := slices.Clone(reqs)
	slices.SortFunc(sorted, func(a, b Request) int { return a.Start.Compare(b.Start) })
	depth := make([]int, len(sorted))
	best := 0
	for i, r := range sorted {
		depth[i] = 1
		for j := range i {
			if e := sorted[j].End; !e.IsZero() && !e.After(r.Start) {
				depth[i] = max(depth[i], depth[j]+1)
			}
		}
		best = max(best, depth[i])
	}
	return best
}
