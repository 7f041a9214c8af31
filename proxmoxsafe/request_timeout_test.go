package proxmoxsafe_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// seenRequest is what the transport behind the library's route guard saw.
type seenRequest struct {
	cancelChan  bool // net/http's Client.Timeout machinery set req.Cancel
	deadline    time.Time
	hasDeadline bool
}

type recordingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []seenRequest
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d, ok := req.Context().Deadline()
	rt.mu.Lock()
	rt.seen = append(rt.seen, seenRequest{cancelChan: req.Cancel != nil, deadline: d, hasDeadline: ok})
	rt.mu.Unlock()
	return rt.next.RoundTrip(req)
}

// TestRequestTimeoutIsAContextDeadline: each request to Proxmox is bounded
// by a context deadline of the configured timeout (the caller's
// HTTPClient.Timeout, else Config.Timeout, else DefaultTimeout), not by
// http.Client.Timeout. With the route guard as the client's Transport,
// net/http enforced Client.Timeout with a goroutine, a timer and a
// req.Cancel channel per request (setRequestCancel); a deadline costs one
// timer. The bound itself is unchanged: the fault matrix
// (TestFaultMatrix) checks hanging answers end at it.
func TestRequestTimeoutIsAContextDeadline(t *testing.T) {
	fake := proxmoxtest.NewUnstartedServer(nil)
	fake.Start() // plain HTTP: a custom Transport cannot take TLS settings
	t.Cleanup(fake.Close)
	g := proxmoxtest.DemoCluster().Guests[0]
	for _, tc := range []struct {
		name    string
		client  time.Duration // the caller's HTTPClient.Timeout
		config  time.Duration // Config.Timeout
		want    time.Duration
		callers bool // the caller's context has a later deadline of its own
	}{
		{name: "default", want: proxmoxsafe.DefaultTimeout},
		{name: "Config.Timeout", config: 7 * time.Second, want: 7 * time.Second},
		{name: "HTTPClient.Timeout wins", client: 5 * time.Second, config: 7 * time.Second, want: 5 * time.Second},
		{name: "the earlier of it and the caller's", config: 3 * time.Second, want: 3 * time.Second, callers: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &recordingTransport{next: http.DefaultTransport}
			c, err := proxmoxsafe.New(proxmoxsafe.Config{
				URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
				AllowInsecureHTTP: true, Timeout: tc.config,
				HTTPClient: &http.Client{Transport: rt, Timeout: tc.client},
				Policy:     proxmoxsafe.Policy{AllowedNodes: []string{g.Node}},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			ctx := t.Context()
			if tc.callers {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			start := time.Now()
			in := proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: g.Node, Type: proxmoxsafe.GuestType(g.Type), VMID: g.VMID}}
			if _, err := c.GuestStatus(ctx, in); err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			if len(rt.seen) != 1 {
				t.Fatalf("%d requests, want 1", len(rt.seen))
			}
			s := rt.seen[0]
			if s.cancelChan {
				t.Error("the request carries a Cancel channel: net/http enforced Client.Timeout with a goroutine per request")
			}
			if !s.hasDeadline {
				t.Fatal("the request has no deadline: nothing bounds it")
			}
			// The deadline was set during the call, tc.want ahead.
			if s.deadline.Before(start.Add(tc.want)) || s.deadline.After(end.Add(tc.want)) {
				t.Errorf("deadline %v after the call started, want %v after a moment during the call", s.deadline.Sub(start), tc.want)
			}
		})
	}
}
