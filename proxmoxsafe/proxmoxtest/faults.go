package proxmoxtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
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
	// this many bytes, to test response size limits.
	BodySize int
	// Latency delays the answer (the request is then served normally unless
	// another field of the fault says otherwise).
	Latency time.Duration
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

// applyFault serves the fault; it reports whether the request is answered
// (false: only latency was injected, serve normally).
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault) bool {
	s.sleep(r, f.Latency)
	if f.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return true
			}
		}
		panic(http.ErrAbortHandler) // fallback: net/http aborts the response
	}
	if f.Status == 0 && f.Body == nil && f.BodySize == 0 {
		return false
	}
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
		if body == nil && f.BodySize == 0 && f.Status >= 400 {
			body, _ = json.Marshal(map[string]any{"data": nil, "message": "request was: " + creds,
				"errors": map[string]string{"header": creds}})
		}
	}
	if f.BodySize > 0 {
		const head, tail = `{"data":"`, `"}`
		n := max(f.BodySize-len(head)-len(tail), 0)
		body = append(append([]byte(head), bytes.Repeat([]byte("x"), n)...), tail...)
	}
	if body == nil {
		body = errorBody(&apiError{status: status, message: reasonText}, false)
	}
	reason := reasonText
	if reason == "" {
		reason = http.StatusText(status)
	}
	writeStatus(w, r, status, reasonPhrase(status, reason), body)
	return true
}
