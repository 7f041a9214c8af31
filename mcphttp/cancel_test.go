package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// addSlow adds "slow", which reports on started and then waits for its
// context to end (a cancelled call ends it) before returning the context's
// error; returned is closed when it returns.
func addSlow(s *mcp.Server) (started, returned chan struct{}) {
	started, returned = make(chan struct{}), make(chan struct{})
	var once sync.Once
	type none struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, none, error) {
		defer once.Do(func() { close(returned) })
		close(started)
		<-ctx.Done()
		return nil, none{}, ctx.Err()
	})
	return started, returned
}

// wire records, on the server's side, what every request carried in and
// what its response carried out, and waits for the POSTs in flight (a
// session's event stream lasts as long as the session).
type wire struct {
	next     http.Handler
	mu       sync.Mutex
	in, out  strings.Builder
	inFlight sync.WaitGroup
}

func (w *wire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		w.inFlight.Add(1)
		defer w.inFlight.Done()
		var b strings.Builder
		r2 := r.Clone(r.Context())
		body := make([]byte, 0, 512)
		buf := make([]byte, 512)
		for {
			n, err := r.Body.Read(buf)
			body = append(body, buf[:n]...)
			if err != nil {
				break
			}
		}
		b.Write(body)
		r2.Body = readCloser{strings.NewReader(string(body))}
		r = r2
		w.mu.Lock()
		w.in.WriteString(b.String() + "\n")
		w.mu.Unlock()
	}
	w.next.ServeHTTP(&wireWriter{ResponseWriter: rw, w: w}, r)
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

type wireWriter struct {
	http.ResponseWriter
	w *wire
}

func (ww *wireWriter) Write(b []byte) (int, error) {
	ww.w.mu.Lock()
	ww.w.out.Write(b)
	ww.w.out.WriteString("\n")
	ww.w.mu.Unlock()
	return ww.ResponseWriter.Write(b)
}

func (ww *wireWriter) Flush() {
	if f, ok := ww.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (ww *wireWriter) Unwrap() http.ResponseWriter { return ww.ResponseWriter }

// messages decodes every JSON object in s that is a JSON-RPC message:
// lines of request bodies, and the data lines of event streams.
func messages(s string) []map[string]json.RawMessage {
	var msgs []map[string]json.RawMessage
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(strings.TrimPrefix(line, "data: "))
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) == nil && m["jsonrpc"] != nil {
			msgs = append(msgs, m)
			continue
		}
		var batch []map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &batch) == nil {
			msgs = append(msgs, batch...)
		}
	}
	return msgs
}

// cancelledCall is the id the client called "slow" with, which it then
// cancelled, read from what the client sent.
func cancelledCall(t *testing.T, sent string) json.RawMessage {
	t.Helper()
	var slowID, cancelledID json.RawMessage
	for _, m := range messages(sent) {
		switch string(m["method"]) {
		case `"tools/call"`:
			if strings.Contains(string(m["params"]), `"slow"`) {
				slowID = m["id"]
			}
		case `"notifications/cancelled"`:
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m["params"], &p)
			cancelledID = p.RequestID
		}
	}
	if slowID == nil || string(slowID) != string(cancelledID) {
		t.Fatalf("the client called slow as %s and cancelled %s:\n%s", slowID, cancelledID, sent)
	}
	return slowID
}

// TestCancelledCallGetsNoAnswer: a client cancels a tools/call in flight
// (go-sdk's client sends notifications/cancelled when the call's context
// ends); the server sends no response with its id, neither on the POST's
// event stream (streamable HTTP) nor on the session's stream (legacy
// SSE), and keeps answering: a later call gets its answer. Streamable
// HTTP on both protocol eras ("" is the newest a stateful endpoint
// serves).
func TestCancelledCallGetsNoAnswer(t *testing.T) {
	t.Parallel()
	type variant struct {
		name   string
		legacy bool
		pv     string
	}
	variants := []variant{{name: "sse", legacy: true}}
	for _, pv := range protocolVersions {
		variants = append(variants, variant{name: "streamable " + pvName(pv), pv: pv})
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			var started, returned chan struct{}
			f := newFixture(t, fixtureOpts{opts: mcphttp.Options{LegacySSE: v.legacy}, extra: func(s *mcp.Server) { started, returned = addSlow(s) }})
			rec := &wire{next: f.handler}
			ts := httptest.NewServer(rec)
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() }) // before the fixture's Shutdown: a session's event stream stays open until then
			endpoint := ts.URL + strings.TrimPrefix(f.url, f.ts.URL)
			hc := &http.Client{Transport: bearer{aliceTok, ts.Client().Transport}}
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}
			if v.legacy {
				tr = &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: hc}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "cancel-test", Version: "0"}, nil).Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: v.pv})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				called <- err
			}()
			<-started
			cancel()
			if err := <-called; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v, want context.Canceled", err)
			}
			select {
			case <-returned: // the notification reached the handler
			case <-time.After(10 * time.Second):
				t.Fatal("the handler never saw the cancellation")
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "cluster_status", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("the call after the cancelled one: %+v, %v", res, err)
			}
			cs.Close()
			rec.inFlight.Wait() // every POST has been answered
			rec.mu.Lock()
			sent, got := rec.in.String(), rec.out.String()
			rec.mu.Unlock()
			id := cancelledCall(t, sent)
			answers := 0
			for _, m := range messages(got) {
				if _, isRequest := m["method"]; isRequest {
					continue
				}
				answers++
				if string(m["id"]) == string(id) {
					t.Errorf("the cancelled call %s got an answer: %s", id, got)
				}
			}
			if answers < 2 { // initialize and the later call at least
				t.Errorf("only %d answers recorded:\n%s", answers, got)
			}
		})
	}
}

// TestCancelledCallGetsNoAnswerOnItsStream: a client that keeps reading
// the event stream of the POST that carried a call (as the TypeScript SDK
// does; go-sdk's client closes it) and cancels the call from another POST
// of the session gets no answer on that stream: it ends empty. A later
// call of the session is answered; a cancellation from another identity
// is refused, one naming a call already answered holds nothing back; the handler
// keeps nothing once the POSTs are over.
func TestCancelledCallGetsNoAnswerOnItsStream(t *testing.T) {
	t.Parallel()
	var started, returned chan struct{}
	f := newFixture(t, fixtureOpts{extra: func(s *mcp.Server) { started, returned = addSlow(s) }})
	r := f.do(t, http.MethodPost, f.url, initBody, auth(aliceTok))
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", r.status, r.body)
	}
	session := merge(auth(aliceTok), map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	post := func(body string, hdr map[string]string) response {
		t.Helper()
		return f.do(t, http.MethodPost, f.url, body, hdr)
	}
	if r := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", r.status, r.body)
	}
	cancelOf := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user"}}`
	}
	stream := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range session {
			req.Header.Set(k, v)
		}
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			stream <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		stream <- resp.Status + " " + resp.Header.Get("Content-Type") + "\n" + string(b)
	}()
	<-started
	// Bob's notification, with Alice's session id, does not reach the
	// call (go-sdk refuses the POST: the session is not his).
	if r := post(cancelOf("7"), merge(session, auth(bobTok))); r.status != http.StatusForbidden {
		t.Errorf("bob's cancellation: %d %q, want 403", r.status, r.body)
	}
	if r := post(cancelOf("7"), session); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %q", r.status, r.body)
	}
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never saw the cancellation")
	}
	got := <-stream
	if !strings.HasPrefix(got, "200 OK text/event-stream") {
		t.Errorf("the cancelled call's POST: %q, want 200 and an event stream", got)
	}
	for _, m := range messages(got) {
		if _, isRequest := m["method"]; !isRequest && string(m["id"]) == "7" {
			t.Errorf("the cancelled call got an answer on its stream: %q", got)
		}
	}
	// Later calls are answered, and a cancellation after the answer (too
	// late) changes nothing.
	r = post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"cluster_status","arguments":{}}}`, session)
	if ms := messages(r.body); len(ms) != 1 || string(ms[0]["id"]) != "8" || ms[0]["result"] == nil {
		t.Errorf("the call after the cancelled one: %d %q", r.status, r.body)
	}
	// (A new id: go-sdk cancels asynchronously, so a late notification
	// could still cancel a new request that reused the id.)
	post(cancelOf("8"), session)
	r = post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`, session)
	if ms := messages(r.body); len(ms) != 1 || string(ms[0]["id"]) != "9" || ms[0]["result"] == nil {
		t.Errorf("a ping after a late cancellation: %d %q", r.status, r.body)
	}
	if n := f.handler.CallSessions(); n != 0 {
		t.Errorf("%d sessions still have calls recorded after their POSTs", n)
	}
	if r := f.do(t, http.MethodDelete, f.url, "", session); r.status != http.StatusNoContent && r.status != http.StatusOK {
		t.Errorf("DELETE: %d %q", r.status, r.body)
	}
}

// TestCancelledMutationStaysAudited, end to end over stateful streamable
// HTTP with the real server: a client that reads its call's event stream
// cancels a guest_power call while the fake Proxmox holds its POST. The
// stream ends without an answer, a later call is answered, exactly one
// mutating request went out, and the audit log records it as approved
// and submitted with its task.
func TestCancelledMutationStaysAudited(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	t.Cleanup(fake.Close)
	var audit syncBuffer
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret, Fingerprint: fake.Fingerprint(),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}},
		Audit:  auditlog.New(&audit, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/nodes/pve2/qemu/103/status/start"
	hold := make(chan struct{})
	fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: path, Hold: hold, Times: 1})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h, err := mcphttp.New(mcpserver.New(client, nil), &mcphttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		ts.Close()
	})
	f := &fixture{ts: ts, url: ts.URL + mcphttp.DefaultPath, seen: &syncBuffer{}}

	r := f.do(t, http.MethodPost, f.url, initBody, nil)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", r.status, r.body)
	}
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	stream := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url, strings.NewReader(
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"guest_power","arguments":{"node":"pve2","type":"qemu","vmid":103,"action":"start","approval":"APPROVE start pve2/qemu/103"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range session {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			stream <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		stream <- string(b)
	}()
	deadline := time.Now().Add(30 * time.Second) // a bound for a hung test
	for len(fake.MutatingRequests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the POST never reached the fake")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`, session); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %q", r.status, r.body)
	}
	release()
	got := <-stream // ends once the server has finished the call
	for _, m := range messages(got) {
		if _, isRequest := m["method"]; !isRequest && string(m["id"]) == "5" {
			t.Errorf("the cancelled call got an answer: %q", got)
		}
	}
	r = f.do(t, http.MethodPost, f.url, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_guests","arguments":{}}}`, session)
	if ms := messages(r.body); len(ms) != 1 || string(ms[0]["id"]) != "6" || ms[0]["result"] == nil {
		t.Errorf("the call after the cancelled one: %d %q", r.status, r.body)
	}
	f.do(t, http.MethodDelete, f.url, "", session)

	if m := fake.MutatingRequests(); len(m) != 1 {
		t.Errorf("%d mutating requests, want 1", len(m))
	}
	var events []string
	for line := range strings.Lines(audit.String()) {
		var rec proxmoxsafe.AuditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Event != proxmoxsafe.AuditAnchor { // the log's first record
			events = append(events, string(rec.Event))
		}
		if rec.Event == proxmoxsafe.AuditSubmitted && !strings.HasPrefix(rec.UPID, "UPID:pve2:") {
			t.Errorf("submitted without its task: %+v", rec)
		}
	}
	if strings.Join(events, ",") != "approved,submitted" {
		t.Errorf("audit events %q, want approved then submitted", events)
	}
}
