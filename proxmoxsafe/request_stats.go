package proxmoxsafe

import (
	"errors"
	"net/http"
	"time"
)

// RequestStats is what [Config].OnRequest learns of one request to
// Proxmox: never its path, query or body, which may name guests or carry
// a ticket, so that a metrics label cannot leak them or grow without
// bound.
type RequestStats struct {
	// Method is the HTTP method.
	Method string
	// Status is the response's status code; 0 when no response came
	// (a connection error, a timeout, or the transport guard's refusal).
	Status int
	// Refused reports a request the transport guard stopped: it never
	// left the process.
	Refused bool
	// Duration is from sending to the response's headers (or the error).
	Duration time.Duration
}

// observed reports every request's RequestStats to on; it wraps the
// transport guard, so a refused request is reported too.
type observed struct {
	next http.RoundTripper
	on   func(RequestStats)
}

func (o observed) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := o.next.RoundTrip(req)
	st := RequestStats{Method: req.Method, Duration: time.Since(start)}
	if resp != nil {
		st.Status = resp.StatusCode
	}
	st.Refused = errors.Is(err, ErrNotAllowed) // only the guard refuses here
	o.on(st)
	return resp, err
}
