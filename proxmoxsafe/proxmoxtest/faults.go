package proxmoxtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault describes an injected failure. The first matching fault (in
// injection order) applies to a request, before authentication.
type Fault struct {
	// Method to match; "" matches any.
	Method string
	// Path to match: the exact path after /api2/json, or a prefix when it
	// ends with "*"; "" matches any.
	Path string
	// Status answers with this status (default 200 when only Body or
	// BodySize is set)...
	Status int
	// ...and this reason phrase (PVE puts error messages there); default
	// the standard text.
	Reason string
	// Body is a raw body to send instead of the normal one (malformed JSON,
	// HTML from a proxy, ...).
	Body []byte
	// BodySize sends a valid-looking JSON body {"data":"xxx..."} padded to
	// this many bytes, to test response size limits. It is streamed, not
	// held in memory, so a gigantic size costs the test nothing.
	BodySize int
	// Endless streams a body that never ends ({"data":"xxx... without a
	// Content-Length) until the client goes away or the server closes.
	Endless bool
	// Trickle sends the body (the fault's or the normal answer) one byte
	// at a time, this long apart, after headers that went out at once: a
	// stalled proxy or a congested link. The reason phrase is then the
	// standard one.
	Trickle time.Duration
	// Header adds headers to the answer, replacing the fake's own: the
	// Location of a redirect, the Content-Type of an HTML error page.
	Header http.Header
	// Latency delays the answer (the request is then served normally unless
	// another field of the fault says otherwise). A client that goes away
	// meanwhile (its timeout) gets no answer at all, its connection is
	// dropped; the request is still carried out, as Proxmox's worker
	// carries out a request whose client gave up (a POST that timed out
	// may have started its task), unless the fault answers in its own
	// way (Status, Body, Drop, …), which carries out nothing.
	Latency time.Duration
	// Hold, when not nil, holds the request (already in the request log)
	// until the channel is closed, after Latency; then the fault's other
	// fields apply. A test acts while Proxmox "works" on a request,
	// without guessing times. A client that goes away, or a server that
	// closes, while the request is held gets no answer, as with Latency.
	Hold <-chan struct{}
	// Drop hijacks the connection and closes it without answering.
	Drop bool
	// Times is how many requests the fault applies to; 0 = forever.
	Times int
	// Echo makes the fault repeat the request's credentials, the way a
	// debug proxy, WAF or error page in front of Proxmox may: every
	// "{{auth}}" in Reason and Body is replaced by the Authorization,
	// Cookie and CSRFPreventionToken headers, and an error answer without
	// a Body carries them in its message and errors too.
	Echo bool
}

// echoMarker is what [Fault.Echo] replaces with the request's credentials.
const echoMarker = "{{auth}}"

// InjectFault adds a fault.
func (s *Server) InjectFault(f Fault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = append(s.faults, &f)
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = nil
}

// takeFault returns a copy of the first fault matching the request and
// counts it against Times.
func (s *Server) takeFault(method, path string) (Fault, bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for i, f := range s.faults {
		if f.Method != "" && f.Method != method {
			continue
		}
		if f.Path != "" {
			if prefix, ok := strings.CutSuffix(f.Path, "*"); ok {
				if !strings.HasPrefix(path, prefix) {
					continue
				}
			} else if f.Path != path {
				continue
			}
		}
		out := *f
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return out, true
	}
	return Fault{}, false
}

// answersItself reports whether the fault replaces the answer (or drops
// the connection) rather than only delaying or trickling the normal one.
func (f Fault) answersItself() bool {
	return f.Drop || f.Status != 0 || f.Body != nil || f.BodySize != 0 || f.Endless || f.Header != nil
}

// applyFault serves the fault. answered: the request is done. left: the
// client went away (or the server closes) during the fault's delay, and
// the fault only delayed the normal answer, which the caller carries out
// and does not send ([Server.abandon]); a fault with an answer of its own
// is abandoned here. Neither: serve normally through [Server.faultWriter].
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault) (answered, left bool) {
	if !s.sleep(r, f.Latency) || !s.hold(r, f.Hold) {
		if f.answersItself() {
			s.abandon() // nothing was to be carried out
		}
		return false, true
	}
	if f.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return true, false
			}
		}
		panic(http.ErrAbortHandler) // fallback: net/http aborts the response
	}
	if !f.answersItself() {
		return false, false
	}
	w = s.faultWriter(w, r, f)
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := f.Body
	reasonText := f.Reason
	if f.Echo {
		creds := strings.TrimSpace(strings.Join([]string{
			"Authorization: " + r.Header.Get("Authorization"),
			"Cookie: " + r.Header.Get("Cookie"),
			"CSRFPreventionToken: " + r.Header.Get("CSRFPreventionToken"),
		}, " "))
		esc, _ := json.Marshal(creds)
		body = bytes.ReplaceAll(body, []byte(echoMarker), esc[1:len(esc)-1])
		reasonText = strings.ReplaceAll(reasonText, echoMarker, creds)
		if body == nil && f.BodySize == 0 && !f.Endless && f.Status >= 400 {
			body, _ = json.Marshal(map[string]any{"data": nil, "message": "request was: " + creds,
				"errors": map[string]string{"header": creds}})
		}
	}
	for k, v := range f.Header {
		w.Header()[http.CanonicalHeaderKey(k)] = v
	}
	if f.BodySize > 0 || f.Endless {
		s.stream(w, r, status, f, body)
		return true, false
	}
	if body == nil {
		body = errorBody(&apiError{status: status, message: reasonText}, false)
	}
	reason := reasonText
	if reason == "" {
		reason = http.StatusText(status)
	}
	writeStatus(w, r, status, reasonPhrase(status, reason), body)
	return true, false
}

// fillChunk is what BodySize and Endless bodies are made of, made on
// first use: the binary links this package for --demo, and 32 KiB made at
// package initialization were allocated by every start of it.
var fillChunk = sync.OnceValue(func() []byte { return bytes.Repeat([]byte("x"), 32<<10) })

// stream writes a large or endless body with the standard reason phrase.
// It stops when the client goes away or the server closes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, status int, f Fault, body []byte) {
	setCommonHeaders(w.Header(), time.Now())
	const head, tail = `{"data":"`, `"}`
	if f.Endless {
		w.Header().Del("Content-Length")
	} else {
		f.BodySize = max(f.BodySize, len(head)+len(tail))
		w.Header().Set("Content-Length", strconv.Itoa(f.BodySize))
	}
	w.WriteHeader(status)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		select {
		case <-r.Context().Done():
			return false
		case <-s.closing:
			return false
		default:
			return true
		}
	}
	if body == nil {
		body = []byte(head)
	}
	if f.Endless {
		for ok := send(body); ok; ok = send(fillChunk()) {
		}
		return
	}
	if !send([]byte(head)) {
		return
	}
	for n := f.BodySize - len(head) - len(tail); n > 0; {
		c := fillChunk()[:min(n, len(fillChunk()))]
		if !send(c) {
			return
		}
		n -= len(c)
	}
	send([]byte(tail))
}

// faultWriter returns the writer a request's answer goes through: w
// itself, or a trickling one for a fault with Trickle.
func (s *Server) faultWriter(w http.ResponseWriter, r *http.Request, f Fault) http.ResponseWriter {
	if f.Trickle <= 0 {
		return w
	}
	return &trickleWriter{ResponseWriter: w, s: s, r: r, every: f.Trickle}
}

// trickleWriter sends each byte on its own, every apart. It is not an
// http.Hijacker, so an answer through it has the standard reason phrase.
type trickleWriter struct {
	http.ResponseWriter
	s     *Server
	r     *http.Request
	every time.Duration
}

func (t *trickleWriter) Write(b []byte) (int, error) {
	rc := http.NewResponseController(t.ResponseWriter)
	for i := range b {
		if _, err := t.ResponseWriter.Write(b[i : i+1]); err != nil {
			return i, err
		}
		if err := rc.Flush(); err != nil {
			return i + 1, err
		}
		_ = t.s.sleep(t.r, t.every) // the select below says why it ended early
		select {
		case <-t.r.Context().Done():
			return i + 1, t.r.Context().Err()
		case <-t.s.closing:
			return i + 1, errServerClosing
		default:
		}
	}
	return len(b), nil
}

// errServerClosing ends the fault streams and stalls when the server closes.
var errServerClosing = errors.New("proxmoxtest: server closing")
