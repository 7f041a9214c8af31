package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// Honouring notifications/cancelled: a request the client cancels while
// the server serves it gets no answer, as the MCP specification asks.
// go-sdk cancels the handler's context and then answers anyway (usually
// with the context's error), to a client that has forgotten the id; the
// TypeScript SDK reports such an answer as an error. Only the transport
// sees the notification come in and the answer go out, so each one holds
// the answers back with internal/jsonrpc's Cancellations (as mcpstdio
// does on stdio):
//
//   - streamable HTTP (stateful): the call's answer travels on the event
//     stream of the POST that carried it, and the notification arrives in
//     another POST of the same session. honourCancel marks the call
//     before go-sdk reads the notification, and the call's writer drops
//     the event that answers it (go-sdk then ends that stream, empty).
//     A stateless endpoint has no session that a notification could name
//     a request of: there a client cancels by closing its POST, after
//     which nothing can reach it anyway.
//   - legacy SSE: every answer travels on the session's one event stream,
//     written through the session's connection, which cancelConn wraps.

// sessionHeader names the streamable HTTP session of a request.
const sessionHeader = "Mcp-Session-Id"

// callCancels holds, for each stateful session with calls in flight, the
// calls its client may cancel, by the identity that owns the session and
// its id: the identity too, so that a POST that go-sdk will refuse (403,
// another identity's session) cannot mark a call it does not own.
type callCancels struct {
	mu sync.Mutex
	by map[sessionKey]*sessionCalls
}

type sessionKey struct{ who, session string }

type sessionCalls struct {
	set   rpcerr.Cancellations
	calls int // POSTs in flight that hold the entry
}

// start records a call in flight and returns its session's set.
func (c *callCancels) start(k sessionKey, id jsonrpc.ID) *rpcerr.Cancellations {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = make(map[sessionKey]*sessionCalls)
	}
	s := c.by[k]
	if s == nil {
		s = &sessionCalls{}
		c.by[k] = s
	}
	s.calls++
	s.set.Start(id)
	return &s.set
}

// end releases a call's hold on its session's entry once its POST is
// over; answered says whether its writer already finished it.
func (c *callCancels) end(k sessionKey, id jsonrpc.ID, answered bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.by[k]
	if s == nil {
		return
	}
	if !answered {
		s.set.Finish(id)
	}
	if s.calls--; s.calls == 0 {
		delete(c.by, k)
	}
}

// cancel marks the call id of the session cancelled, if it is in flight.
func (c *callCancels) cancel(k sessionKey, id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.by[k]; s != nil {
		s.set.Cancel(id)
	}
}

// sessions reports how many sessions have calls recorded (tests).
func (c *callCancels) sessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.by)
}

// honourCancel wraps the stateful streamable HTTP endpoint: a POST that
// carries one call is recorded for its session, and its answer held back
// if a notifications/cancelled of the same session names it first. Batches
// (protocol 2025-03-26 and older) pass unchanged.
func (h *Handler) honourCancel(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(sessionHeader)
		if r.Method != http.MethodPost || sid == "" {
			next.ServeHTTP(w, r)
			return
		}
		key := sessionKey{identity(r), sid}
		m := messageFrom(r)
		if id, ok := rpcerr.CancelledID(m.Method, m.Params); ok {
			h.cancels.cancel(key, id) // before go-sdk reads it and cancels the handler
			next.ServeHTTP(w, r)
			return
		}
		id, ok := callID(m)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		cw := newCancelWriter(w, id, h.cancels.start(key, id))
		defer func() { h.cancels.end(key, id, cw.answered) }()
		next.ServeHTTP(cw, r)
		cw.flushRest()
	})
}

// callID is the id of a call, as go-sdk reads it.
func callID(m message) (jsonrpc.ID, bool) {
	if !m.call() {
		return jsonrpc.ID{}, false
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}

// cancelWriter is the writer of one call's POST. On an event stream it
// passes whole events only, and drops the one that answers the call when
// the client cancelled the call; anything else (go-sdk's refusals, JSON
// bodies) passes unchanged.
type cancelWriter struct {
	http.ResponseWriter
	id       jsonrpc.ID
	set      *rpcerr.Cancellations
	answered bool   // the answer's event has been seen (sent or dropped)
	pending  []byte // the start of an event not yet complete
	// answer is how go-sdk begins the answer to id, without the key that
	// follows: see answerStart.
	answer []byte
}

func newCancelWriter(w http.ResponseWriter, id jsonrpc.ID, set *rpcerr.Cancellations) *cancelWriter {
	return &cancelWriter{ResponseWriter: w, id: id, set: set, answer: answerStart(id)}
}

// answerStart is what go-sdk writes before "result" or "error" in its
// answer to id: {"jsonrpc":"2.0","id":ID, — or nil when id's encoding is
// not certain (a string id that encoding/json would escape), which leaves
// every event to responseID. An event that starts so is the answer,
// decided without a JSON decoder, which cost about half of this package's
// CPU time per call (BenchmarkCancelWriter).
func answerStart(id jsonrpc.ID) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	switch v := id.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, v, 10)
	case string:
		for i := 0; i < len(v); i++ {
			c := v[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
				return nil
			}
		}
		b = append(append(append(b, '"'), v...), '"')
	default:
		return nil
	}
	return append(b, ',')
}

func (w *cancelWriter) Write(b []byte) (int, error) {
	if w.answered || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		return w.ResponseWriter.Write(b)
	}
	// go-sdk writes one whole event per Write: then the events are read
	// where they lie, and only a split event's start is kept.
	rest := b
	if len(w.pending) > 0 {
		w.pending = append(w.pending, b...)
		rest = w.pending
	}
	for {
		end := bytes.Index(rest, eventEnd)
		if end < 0 {
			break
		}
		event := rest[:end+len(eventEnd)]
		rest = rest[end+len(eventEnd):]
		if answers(event, w.id, w.answer) {
			w.answered = true
			if w.set.Finish(w.id) {
				continue
			}
		}
		if _, err := w.ResponseWriter.Write(event); err != nil {
			w.pending = nil
			return 0, err
		}
	}
	w.pending = append(w.pending[:0], rest...) // rest may be pending's own tail
	return len(b), nil
}

// eventEnd ends an event on go-sdk's streams.
var eventEnd = []byte("\n\n")

// flushRest writes what is left of an event the stream never completed.
func (w *cancelWriter) flushRest() {
	if len(w.pending) > 0 {
		_, _ = w.ResponseWriter.Write(w.pending)
		w.pending = nil
	}
}

func (w *cancelWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answers reports whether an event's data is the response to the call id.
// It runs on every event of every call's stream, so it reads only the
// data's first keys (responseID), not the result, and first compares them
// with start, the answer's beginning as go-sdk writes it (answerStart; nil:
// none).
func answers(event []byte, id jsonrpc.ID, start []byte) bool {
	var data []byte
	lines := 0
	for line := range bytes.Lines(event) {
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimRight(bytes.TrimPrefix(v, []byte(" ")), "\r\n")
			if lines++; lines == 1 {
				data = v // go-sdk's one data line, read where it lies
			} else {
				data = append(append(data[:len(data):len(data)], '\n'), v...)
			}
		}
	}
	if len(data) == 0 {
		return false
	}
	if start != nil && bytes.HasPrefix(data, start) {
		if key := data[len(start):]; bytes.HasPrefix(key, []byte(`"result":`)) || bytes.HasPrefix(key, []byte(`"error":`)) {
			return true
		}
	}
	got, ok := responseID(data)
	return ok && got == id
}

// responseID is the id of the JSON-RPC response msg, false when msg is
// not a response. go-sdk writes a message's keys in one order ("jsonrpc",
// "id", then "method" for a request, "result" or "error" for a response),
// so the keys before the result say what the message is, and the result,
// which may be large, is not read. A message in another order is decoded
// whole, as go-sdk decodes it. (The events come from go-sdk's encoder: a
// message cut short after its "result" key, or with a "method" after it,
// which DecodeMessage would refuse or call a request, cannot occur.)
func responseID(msg []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	var raw any
	hasID := false
keys:
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		switch key {
		case "jsonrpc":
			var v string
			if dec.Decode(&v) != nil || v != "2.0" {
				return jsonrpc.ID{}, false
			}
			continue
		case "id":
			if dec.Decode(&raw) != nil {
				return jsonrpc.ID{}, false
			}
			hasID = true
			continue
		case "method":
			return jsonrpc.ID{}, false // a request or a notification
		case "result", "error":
			if hasID {
				id, err := jsonrpc.MakeID(raw)
				return id, err == nil && id.IsValid()
			}
		}
		break keys // another order: read the whole message
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	if resp, ok := m.(*jsonrpc.Response); ok {
		return resp.ID, true
	}
	return jsonrpc.ID{}, false
}

// cancelTransport is go-sdk's legacy SSE transport whose connection holds
// back the answers to cancelled requests.
type cancelTransport struct{ *mcp.SSEServerTransport }

func (t cancelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.SSEServerTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c}, nil
}

// cancelConn records the calls it reads and the client's cancellations
// (before go-sdk sees them), and does not write the answer to a call the
// client cancelled.
type cancelConn struct {
	mcp.Connection
	set rpcerr.Cancellations
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok {
		if req.IsCall() {
			c.set.Start(req.ID)
		} else if id, ok := rpcerr.CancelledID(req.Method, req.Params); ok {
			c.set.Cancel(id)
		}
	}
	return msg, err
}

func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && c.set.Finish(resp.ID) {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}
