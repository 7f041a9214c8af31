package pve

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
)

// ticketServer answers POST /access/ticket with a new ticket each time
// (PVE:u@pve:<n>::sig-<n>) and every other request with 200.
func ticketServer(t testing.TB) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api2/json/access/ticket" {
			i := n.Add(1)
			fmt.Fprintf(w, `{"data":{"username":"u@pve","ticket":"PVE:u@pve:%08X::signature-%d","CSRFPreventionToken":"%08X:csrf-token-%d"}}`, i, i, i, i)
			return
		}
		fmt.Fprint(w, `{"data":{}}`)
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

// TestTicketAuthRetiresOldTickets: a long-running client renews every
// hour; the tickets of the last three logins stay redacted, older ones are
// dropped so the redactor does not grow without bound.
func TestTicketAuthRetiresOldTickets(t *testing.T) {
	t.Parallel()
	ts, logins := ticketServer(t)
	u, _ := url.Parse(ts.URL + "/api2/json")
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	ta := NewTicketAuth("u@pve", "long password", &TicketOptions{Now: func() time.Time { return time.Unix(0, now.Load()) }})
	c := &Client{HTTP: ts.Client(), Base: u, Auth: ta, Redact: redact.NewRedactor("long password")}
	for range 5 {
		if err := c.Get(t.Context(), "/version", nil, nil); err != nil {
			t.Fatal(err)
		}
		now.Add(int64(61 * time.Minute))
	}
	if n := logins.Load(); n != 5 {
		t.Fatalf("%d logins, want 5 (one per renewal)", n)
	}
	for i := 1; i <= 5; i++ {
		ticket := fmt.Sprintf("PVE:u@pve:%08X::signature-%d", i, i)
		csrf := fmt.Sprintf("%08X:csrf-token-%d", i, i)
		got := c.Redact.String("t=" + ticket + " c=" + csrf + " e=" + url.QueryEscape(ticket))
		redacted := got == "t=[redacted] c=[redacted] e=[redacted]"
		if want := i >= 3; redacted != want {
			t.Errorf("login %d: %q; redacted %v, want %v", i, got, redacted, want)
		}
	}
	if got := c.Redact.String("long password"); got != redact.Value {
		t.Errorf("the password is no longer redacted: %q", got)
	}
}

// BenchmarkTicketAuthorize measures what ticket authentication adds to a
// request once logged in: one mutex, the cookie and, for writes, the CSRF
// header.
//
//	go test -run - -bench TicketAuthorize -benchmem ./internal/pve
func BenchmarkTicketAuthorize(b *testing.B) {
	ts, _ := ticketServer(b)
	u, _ := url.Parse(ts.URL + "/api2/json")
	ta := NewTicketAuth("u@pve", "long password", nil)
	c := &Client{HTTP: ts.Client(), Base: u, Auth: ta, Redact: redact.NewRedactor()}
	if err := c.Get(b.Context(), "/version", nil, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(""))
		for pb.Next() {
			if _, err := ta.Authorize(b.Context(), c, req); err != nil {
				b.Error(err)
			}
		}
	})
}

// TestTicketAuthRefusesHalfTickets: every shape of a half-authenticated
// answer is ErrSecondFactor, even without NeedTFA, and the ticket is not
// used.
func TestTicketAuthRefusesHalfTickets(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		`{"username":"u@pve","ticket":"PVE:!tfa!%7B%22totp%22%3Atrue%7D:6B0D2C96::sig","CSRFPreventionToken":"6B0D2C96:x"}`,
		`{"username":"u@pve","ticket":"PVE:tfa!u@pve:6B0D2C96::sig","CSRFPreventionToken":"6B0D2C96:x","NeedTFA":1}`,
		`{"username":"u@pve","ticket":"PVE:u2f!u@pve!challenge:6B0D2C96::sig","CSRFPreventionToken":"6B0D2C96:x"}`,
		`{"username":"u@pve","ticket":"PVE:u@pve:6B0D2C96::sig","CSRFPreventionToken":"6B0D2C96:x","NeedTFA":1}`,
	} {
		var seen atomic.Int32
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			fmt.Fprint(w, `{"data":`+data+`}`)
		}))
		u, _ := url.Parse(ts.URL + "/api2/json")
		c := &Client{HTTP: ts.Client(), Base: u, Auth: NewTicketAuth("u@pve", "long password", nil), Redact: redact.NewRedactor()}
		err := c.Get(t.Context(), "/version", nil, nil)
		ts.Close()
		if !errors.Is(err, ErrSecondFactor) || seen.Load() != 1 {
			t.Errorf("%s: err = %v after %d requests, want ErrSecondFactor after the login only", data, err, seen.Load())
		}
	}
}
