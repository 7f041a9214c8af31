package proxmoxtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const apiPrefix = "/api2/json"

// maxBody bounds request bodies; PVE itself refuses large POSTs.
const maxBody = 1 << 20

// reqCtx is what a route handler sees.
type reqCtx struct {
	s       *Server
	r       *http.Request
	tokenID string
	token   *Token
	uri     map[string]string // path parameters
	params  map[string]string // query, body and path parameters merged
}

// delayedAnswer is an answer a handler wants sent only after wait (a
// hanging guest agent); ServeHTTP waits after releasing the model lock.
type delayedAnswer struct {
	wait time.Duration
	data any
	err  *apiError
}

// withTotal is a list answer with PVE's top-level "total" (task log, task list).
type withTotal struct {
	data  any
	total int
}

// ServeHTTP implements [http.Handler]: request log, faults, then the PVE
// pipeline in the order pveproxy runs it: authentication, route lookup
// (501), duplicate parameters, permission check (403), proxying to the
// node (500 unknown host, 595 offline), parameter validation (400), handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()

	rel, inAPI := strings.CutPrefix(r.URL.Path, apiPrefix)
	rawRel := strings.TrimPrefix(r.URL.EscapedPath(), apiPrefix)
	query := r.URL.Query()
	form, bodyErr := readBody(r)
	seq := s.logRequest(Request{Method: r.Method, Path: rel, RawPath: rawRel, Query: query, Form: form, Header: r.Header.Clone()})
	// Registered after wg's Done, so it runs first: the request has ended
	// before Close can return, and whatever way the handler leaves.
	defer s.endRequest(seq)

	// left: the client went away while a delay held the request.
	left := !s.sleep(r, s.Latency)
	if f, ok := s.takeFault(r.Method, rel); ok {
		switch {
		case left && f.answersItself():
			s.abandon() // the fault's own answer carries out nothing
		case !left:
			answered, gone := s.applyFault(w, r, f)
			if answered {
				return
			}
			if left = gone; !left {
				w = s.faultWriter(w, r, f)
			}
		}
	}

	data, aerr := s.dispatch(r, rel, inAPI, query, form, bodyErr)
	if left {
		// Carried out, as Proxmox's worker carries out a request whose
		// client gave up; the answer goes nowhere.
		s.abandon()
	}
	if d, ok := data.(delayedAnswer); ok {
		// The handler decided under the model lock; the wait holds none.
		if !s.sleep(r, d.wait) {
			s.abandon()
		}
		data, aerr = d.data, d.err
	}
	s.mu.RLock()
	withMessage := s.cluster.versionAtLeast(8, 3, 0)
	s.mu.RUnlock()
	if aerr != nil {
		if aerr.status == http.StatusUnauthorized && !s.sleep(r, s.AuthDelay) {
			s.abandon()
		}
		writeStatus(w, r, aerr.status, reasonPhrase(aerr.status, aerr.message), errorBody(aerr, withMessage))
		return
	}
	env := map[string]any{"data": data}
	if wt, ok := data.(withTotal); ok {
		env = map[string]any{"data": wt.data, "total": wt.total}
	}
	body, err := json.Marshal(env)
	if err != nil {
		ae := errf("proxmoxtest: encoding answer: %v", err)
		writeStatus(w, r, ae.status, ae.message, errorBody(ae, withMessage))
		return
	}
	writeStatus(w, r, http.StatusOK, "OK", body)
}

// readBody decodes POST/PUT parameters from a form or JSON body.
func readBody(r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		if len(strings.TrimSpace(string(b))) == 0 {
			return url.Values{}, nil
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		out := url.Values{}
		for k, v := range m {
			switch v := v.(type) {
			case bool:
				out.Set(k, map[bool]string{true: "1", false: "0"}[v])
			case float64:
				out.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
			case string:
				out.Set(k, v)
			case nil:
			default:
				j, _ := json.Marshal(v)
				out.Set(k, string(j))
			}
		}
		return out, nil
	}
	return url.ParseQuery(string(b))
}

func (s *Server) dispatch(r *http.Request, rel string, inAPI bool, query, form url.Values, bodyErr error) (any, *apiError) {
	// Mutating handlers (tasks, HA countdowns, task polls) need the write
	// lock; plain reads share the read lock so big listings run in parallel.
	if r.Method == http.MethodGet && !strings.Contains(rel, "/tasks/") && !strings.HasSuffix(rel, "/status/current") && s.TaskDuration <= 0 {
		s.mu.RLock()
		defer s.mu.RUnlock()
	} else {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.finishDueTasks(time.Now())
		s.finishDueHA(time.Now())
	}

	var tokenID string
	var tok *Token
	if !inAPI || !noAuthRoute(r.Method, rel) {
		var aerr *apiError
		if tokenID, tok, aerr = s.authenticate(r); aerr != nil {
			return nil, aerr
		}
	}
	if !inAPI {
		return nil, &apiError{status: http.StatusNotImplemented, message: "no such uri"}
	}
	rt, uri := findRoute(r.Method, rel)
	if rt == nil || !s.cluster.versionAtLeast(rt.since[0], rt.since[1], rt.since[2]) {
		return nil, &apiError{status: http.StatusNotImplemented, message: fmt.Sprintf("Method '%s %s' not implemented", r.Method, rel)}
	}
	if bodyErr != nil {
		return nil, &apiError{status: http.StatusBadRequest, message: "malformed request body: " + bodyErr.Error()}
	}
	params := map[string]string{}
	for k, v := range form {
		params[k] = v[0]
	}
	for k, v := range query { // query parameters override the body
		params[k] = v[0]
	}
	dup := map[string]string{}
	for k, v := range params {
		if u, ok := uri[k]; ok && u != v {
			dup[k] = "duplicate parameter (already defined in URI) with conflicting values!"
		}
	}
	if len(dup) > 0 {
		return nil, paramErr(dup)
	}
	for k, v := range uri {
		params[k] = v
	}
	rc := &reqCtx{s: s, r: r, tokenID: tokenID, token: tok, uri: uri, params: params}
	if aerr := rt.perm.check(rc); aerr != nil {
		return nil, aerr
	}
	if rt.proxy {
		if aerr := s.proxyTo(uri["node"]); aerr != nil {
			return nil, aerr
		}
	}
	if errs := validate(paramsOf(s.cluster, rt.params), params); errs != nil {
		return nil, paramErr(errs)
	}
	return rt.handle(rc)
}

// proxyTo models pveproxy forwarding a request to the node in the path.
func (s *Server) proxyTo(node string) *apiError {
	n := s.cluster.node(node)
	if n == nil {
		return errf("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", node, node)
	}
	if !n.Online {
		// AnyEvent::HTTP pseudo-status for a failed connect.
		return &apiError{status: 595, message: "No route to host"}
	}
	return nil
}

// Helpers for handlers.

func (rc *reqCtx) vmid() int {
	n, _ := strconv.Atoi(rc.params["vmid"])
	return n
}

func (rc *reqCtx) flag(name string) bool { return rc.params[name] == "1" }

// user is the task owner string: the full token id (user@realm!token).
func (rc *reqCtx) user() string { return rc.tokenID }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
