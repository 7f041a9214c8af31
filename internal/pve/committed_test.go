package pve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDoCommittedFinishesTheExchange: a request the server holds when the
// caller cancels is finished; its answer is returned.
func TestDoCommittedFinishesTheExchange(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		_, _ = w.Write([]byte(`{"data":"UPID:pve1:00000001:00000002:00000003:qmstop:100:u@pve!t:"}`))
	}))
	t.Cleanup(ts.Close)
	c := newClient(t, ts)
	c.Timeout = time.Minute
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var id string
	go func() { done <- c.DoCommitted(ctx, http.MethodPost, "/x", url.Values{}, &id) }()
	<-arrived
	cancel()
	close(release)
	if err := <-done; err != nil || !strings.HasPrefix(id, "UPID:pve1:") {
		t.Fatalf("err = %v, id = %q: want the answer read after the cancellation", err, id)
	}
}

// TestDoCommittedCancelBeforeConnection: a cancellation while the client
// is still connecting (here a TLS handshake the server never answers)
// stops the request: nothing is sent and the error is not unsettled. It
// is reported as the cancellation, not as the per-request timeout.
func TestDoCommittedCancelBeforeConnection(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			accepted <- conn
		}
	}()
	u, _ := url.Parse("https://" + ln.Addr().String() + "/api2/json")
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	// The bound a broken abort would run into; it is not measured.
	c := &Client{HTTP: &http.Client{Transport: tr}, Base: u, Timeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.DoCommitted(ctx, http.MethodPost, "/x", url.Values{}, nil) }()
	conn := <-accepted
	defer conn.Close()
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) || Unsettled(err) {
		t.Fatalf("err = %v: want the cancellation, settled (nothing sent)", err)
	}
}

// TestDoCommittedNotSentAfterCancel: a context that ended before the call
// sends nothing.
func TestDoCommittedNotSentAfterCancel(t *testing.T) {
	t.Parallel()
	ts, seen := rawServer(t, "200 OK", `{"data":null}`)
	c := newClient(t, ts)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := c.DoCommitted(ctx, http.MethodPost, "/x", url.Values{}, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "not sent") || Unsettled(err) {
		t.Fatalf("err = %v, want a settled cancellation saying it was not sent", err)
	}
	if len(*seen) != 0 {
		t.Errorf("requests = %v, want none", *seen)
	}
}
