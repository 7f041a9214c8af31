package testutil

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
)

// Dialer opens a client's connections as http.Transport does by default
// and counts them, so a fault matrix can tell whether a fault below HTTP
// (where the fake logs nothing) was reached; after [Dialer.TakeDown] it
// connects to a port that refuses (see [RefusingAddr]) instead of the
// server asked for.
type Dialer struct {
	dials, atFault atomic.Int64
	refusing       string
	down           atomic.Bool
}

// NewDialer returns a Dialer whose refusing port is held until t ends.
func NewDialer(t testing.TB) *Dialer {
	d := &Dialer{refusing: RefusingAddr(t)}
	d.atFault.Store(-1)
	return d
}

// DialContext opens a connection to addr, or to the refusing port once
// the upstream is down, and counts it.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	if d.down.Load() {
		addr = d.refusing
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// TakeDown makes later connections go to the refusing port. Closing the
// server alone is not enough: on a busy machine another listener may take
// its freed port, and the request meant to be refused reaches it.
func (d *Dialer) TakeDown() { d.down.Store(true) }

// MarkFault notes how many connections were opened when a fault was
// injected.
func (d *Dialer) MarkFault() { d.atFault.Store(d.dials.Load()) }

// DialedSinceFault reports whether a connection was opened after
// [Dialer.MarkFault] (false before it was called).
func (d *Dialer) DialedSinceFault() bool {
	at := d.atFault.Load()
	return at >= 0 && d.dials.Load() > at
}
