package pve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// TestFailuresNameTheirPhase checks that a failure without a usable answer
// says where the request was, and whether its effect is unknown.
func TestFailuresNameTheirPhase(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api2/json/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/api2/json/stall-body":
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"data":`))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/api2/json/html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, "<html>login</html>")
		case "/api2/json/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/api2/json/cut":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first: frees the waiting handlers
	// A port held by a socket that never listens: a closed server's port
	// may be taken by another listener on a busy machine.
	down := "http://" + testutil.RefusingAddr(t)

	tests := []struct {
		name, base, path string
		want             []string
		is               error
		unsettled        bool
	}{
		{"refused connection", down, "/x", []string{"connection refused"}, nil, false},
		{"slow headers", ts.URL, "/slow", []string{"POST /slow: no answer within", "timed out waiting for the answer's headers"}, context.DeadlineExceeded, true},
		{"stalled body", ts.URL, "/stall-body", []string{"timed out reading the answer's body"}, context.DeadlineExceeded, true},
		{"HTML page", ts.URL, "/html", []string{"not a Proxmox API answer (Content-Type text/html)"}, nil, true},
		{"refused redirect", ts.URL, "/redirect", []string{"no redirects"}, nil, false},
		{"cut connection", ts.URL, "/cut", []string{"the connection was closed"}, io.ErrUnexpectedEOF, true},
		{"error status", ts.URL, "/other", []string{"500"}, nil, false},
	}
	// The bound is either the http.Client's Timeout or Client.Timeout (a
	// context deadline per exchange, what the library sets): the same
	// failures read the same.
	for _, bound := range []string{"http.Client.Timeout", "Client.Timeout"} {
		for _, tc := range tests {
			t.Run(bound+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				u, _ := url.Parse(tc.base + "/api2/json")
				hc := &http.Client{Transport: &http.Transport{},
					CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("no redirects") }}
				defer hc.CloseIdleConnections()
				c := &Client{HTTP: hc, Base: u, Auth: HeaderAuth("PVEAPIToken=u@pve!t=SECRET-CANARY")}
				// Only the two timeout rows are about the bound. For the
				// stalled body it must pass after the headers came, which
				// takes a loaded machine more than 200 ms now and then
				// (the headers-wait message then came instead); the other
				// rows get a bound they never reach.
				d := time.Minute
				switch tc.path {
				case "/slow":
					d = 200 * time.Millisecond // the headers never come
				case "/stall-body":
					d = 2 * time.Second
				}
				if bound == "Client.Timeout" {
					c.Timeout = d
				} else {
					hc.Timeout = d
				}
				var out any
				err := c.Post(t.Context(), tc.path, url.Values{}, &out)
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %q, want %q", err, w)
					}
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("err = %v does not match %v", err, tc.is)
				}
				if Unsettled(err) != tc.unsettled {
					t.Errorf("Unsettled = %v, want %v (err %v)", Unsettled(err), tc.unsettled, err)
				}
			})
		}
	}
}

// TestPhaseOnlyMovesForward: a dial net/http started for a request that
// then got an idle connection (reads sent at once) still runs its
// handshake hooks on the request's trace; a timeout while the body is
// read must still say so.
func TestPhaseOnlyMovesForward(t *testing.T) {
	t.Parallel()
	var p phase
	req, cancel := p.trace(httptest.NewRequest(http.MethodGet, "https://pve.example/", nil), 0)
	defer cancel()
	trace := httptrace.ContextClientTrace(req.Context())
	trace.GotConn(httptrace.GotConnInfo{Reused: true})
	trace.WroteRequest(httptrace.WroteRequestInfo{})
	p.reading()
	trace.TLSHandshakeStart() // the other dial
	if err := p.explain(context.DeadlineExceeded); !strings.Contains(err.Error(), "reading the answer's body") {
		t.Errorf("err = %q, want the body read named", err)
	}
}
