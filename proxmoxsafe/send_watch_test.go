package proxmoxsafe_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// countingDialer opens real connections and counts them; refuseAt makes
// the dial with that number (1 is the first) fail, as a host that stopped
// listening does: nothing leaves the process.
type countingDialer struct {
	dials    atomic.Int64
	refuseAt int64
}

func (d *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if n := d.dials.Add(1); n == d.refuseAt {
		return nil, errors.New("connect: connection refused (test)")
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// TestSendWatch: the watch says a mutating request may have left the
// process exactly when one had a connection to Proxmox — whatever error the
// call ends with. A state read that times out or whose connection drops,
// and a POST whose dial is refused, sent nothing; a POST that got a
// connection and was dropped, timed out or answered may have been carried
// out.
func TestSendWatch(t *testing.T) {
	t.Parallel()
	const (
		preRead = "/nodes/pve1/qemu/100/status/current"
		post    = "/nodes/pve1/qemu/100/status/stop"
	)
	// dialsOfAStop is how many connections one stop makes (one per
	// request: keep-alives are off); its POST is the last.
	dialsOfAStop := func(t *testing.T) int64 {
		d := &countingDialer{}
		e := newEnv(t, func(c *proxmoxsafe.Config) {
			c.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: d.DialContext}}
		})
		ctx, w := proxmoxsafe.WatchSends(t.Context())
		if _, err := e.client.GuestPower(ctx, powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)); err != nil || !w.MutatingSent() {
			t.Fatalf("stop: err %v, sent %v", err, w.MutatingSent())
		}
		return d.dials.Load()
	}
	for _, tc := range []struct {
		name  string
		fault *proxmoxtest.Fault
		// refuseLastDial refuses the stop's last connection, its POST's.
		refuseLastDial bool
		// custom: the HTTPClient's transport is not an *http.Transport.
		custom   bool
		wantSent bool
		wantErr  bool
	}{
		{name: "stop sent", wantSent: true},
		{name: "pre-read times out", fault: &proxmoxtest.Fault{Method: "GET", Path: preRead, Latency: time.Hour}, wantErr: true},
		{name: "pre-read connection dropped", fault: &proxmoxtest.Fault{Method: "GET", Path: preRead, Drop: true}, wantErr: true},
		{name: "pre-read answers 500", fault: &proxmoxtest.Fault{Method: "GET", Path: preRead, Status: 500}, wantErr: true},
		{name: "POST connection refused", refuseLastDial: true, wantErr: true},
		{name: "POST connection dropped", fault: &proxmoxtest.Fault{Method: "POST", Path: post, Drop: true}, wantSent: true, wantErr: true},
		{name: "POST times out", fault: &proxmoxtest.Fault{Method: "POST", Path: post, Latency: time.Hour}, wantSent: true, wantErr: true},
		{name: "POST answers 500", fault: &proxmoxtest.Fault{Method: "POST", Path: post, Status: 500}, wantSent: true, wantErr: true},
		{name: "refused by policy", custom: true, wantErr: true}, // VMID 106 is protected: nothing is read either
		{name: "untraceable transport", custom: true, wantSent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &countingDialer{}
			if tc.refuseLastDial {
				d.refuseAt = dialsOfAStop(t)
			}
			fake := proxmoxtest.NewServer(testCluster())
			e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
				if tc.fault != nil && tc.fault.Latency > 0 {
					c.Timeout = 500 * time.Millisecond // the rows that time out; the others keep the default bound
				}
				var rt http.RoundTripper = &http.Transport{DisableKeepAlives: true, DialContext: d.DialContext}
				if tc.custom {
					// A custom transport gets no TLS settings from Config: it
					// trusts the fake's certificate itself.
					c.Fingerprint = ""
					rt = opaqueTransport{fake.Client().Transport}
				}
				c.HTTPClient = &http.Client{Transport: rt}
			})
			if tc.fault != nil {
				e.fake.InjectFault(*tc.fault)
			}
			in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)
			if tc.name == "refused by policy" {
				in = powerIn("pve1", "qemu", 106, proxmoxsafe.ActionStop)
			}
			ctx, w := proxmoxsafe.WatchSends(t.Context())
			_, err := e.client.GuestPower(ctx, in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if got := w.MutatingSent(); got != tc.wantSent {
				t.Errorf("MutatingSent = %v, want %v (err %v; mutating requests the fake logged %v)", got, tc.wantSent, err, reqLines(e.fake.MutatingRequests()))
			}
			if !tc.wantSent && !tc.refuseLastDial && len(e.fake.MutatingRequests()) != 0 {
				t.Errorf("mutating requests = %v, want none", reqLines(e.fake.MutatingRequests()))
			}
			if again, same := proxmoxsafe.WatchSends(ctx); same != w || again != ctx {
				t.Error("WatchSends on a watched context made a second watch")
			}
		})
	}
}

// TestSendWatchUnwatched: calls without a watch are unaffected, and a
// context without one has none.
func TestSendWatchUnwatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if proxmoxsafe.SendWatchFrom(t.Context()) != nil {
		t.Fatal("a plain context carries a watch")
	}
	if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)); err != nil {
		t.Fatal(err)
	}
	var zero proxmoxsafe.SendWatch
	if zero.MutatingSent() {
		t.Error("the zero SendWatch has seen a request")
	}
}

// opaqueTransport hides an *http.Transport behind another type, as a
// caller's instrumented RoundTripper does.
type opaqueTransport struct{ next http.RoundTripper }

func (o opaqueTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return o.next.RoundTrip(r)
}
