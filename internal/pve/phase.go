package pve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// A request that fails without an answer fails somewhere: connecting, in
// the TLS handshake, waiting for the headers, reading the body. net/http's
// own texts do not say where ("context deadline exceeded", or "awaiting
// headers" while the TLS handshake hung), so each request records the
// phase it reached and a timeout, a cancellation or a cut connection is
// reported with it.

// phase is how far one request got. The trace hooks may run on the
// transport's dialing goroutine, hence the atomic.
type phase struct {
	at    atomic.Int32
	start time.Time
	// answered is set when an HTTP answer arrived with the error (a
	// redirect the client refused to follow): the request is settled.
	answered bool
	// commit decides a committed exchange (DoCommitted) between the
	// connection and the caller's cancellation; unused otherwise.
	commit atomic.Int32
}

const (
	commitOpen int32 = iota
	commitSending
	commitAborted
)

const (
	phaseConnecting int32 = iota
	phaseHandshake
	phaseSending
	phaseWaiting
	phaseBody
)

var phaseText = [...]string{
	phaseConnecting: "connecting to Proxmox",
	phaseHandshake:  "in the TLS handshake",
	phaseSending:    "sending the request",
	phaseWaiting:    "waiting for the answer's headers",
	phaseBody:       "reading the answer's body",
}

// trace returns req with hooks that record its phase in p and, when
// timeout > 0, a deadline that far away; call cancel once the answer's
// body has been read and closed.
func (p *phase) trace(req *http.Request, timeout time.Duration) (*http.Request, context.CancelFunc) {
	p.start = time.Now()
	// A phase only moves forward: net/http may dial a connection for a
	// request and then hand it an idle one that came free first (reads
	// sent at once), and that dial's handshake hooks still run on this
	// request's trace while it reads its answer.
	set := func(v int32) {
		for at := p.at.Load(); at < v && !p.at.CompareAndSwap(at, v); at = p.at.Load() {
		}
	}
	trace := &httptrace.ClientTrace{
		TLSHandshakeStart: func() { set(phaseHandshake) },
		GotConn: func(httptrace.GotConnInfo) {
			p.commit.CompareAndSwap(commitOpen, commitSending)
			set(phaseSending)
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				set(phaseWaiting)
			}
		},
	}
	ctx, cancel := req.Context(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	return req.WithContext(httptrace.WithClientTrace(ctx, trace)), cancel
}

// reading marks the start of the body read.
func (p *phase) reading() { p.at.Store(phaseBody) } // the last phase: never a step back

// explain rewrites a timeout, a cancellation or a connection closed early
// into what happened and where; other errors are returned as they are.
// The result still matches context.DeadlineExceeded, context.Canceled and
// io.ErrUnexpectedEOF with errors.Is.
func (p *phase) explain(err error) error {
	where := phaseText[p.at.Load()]
	took := time.Since(p.start).Round(time.Millisecond)
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return &phaseError{msg: "cancelled " + where, cause: context.Canceled}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return &phaseError{msg: fmt.Sprintf("no answer within %s: timed out %s", took, where), cause: context.DeadlineExceeded}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return &phaseError{msg: "the connection was closed " + where + " (Proxmox restarting, or a proxy cut it)", cause: io.ErrUnexpectedEOF}
	}
	return err
}

// phaseError is an explained failure; Unwrap gives the condition callers
// branch on, not net/http's wording.
type phaseError struct {
	msg   string
	cause error
}

func (e *phaseError) Error() string { return e.msg + ": " + e.cause.Error() }
func (e *phaseError) Unwrap() error { return e.cause }

// written reports whether the whole request went out: from then on a
// failure leaves its effect unknown.
func (p *phase) written() bool { return p.at.Load() >= phaseWaiting && !p.answered }

// unsettled marks a failure after the request was written and before a
// usable answer arrived: Proxmox may have acted on it.
type unsettled struct{ err error }

func (e *unsettled) Error() string { return e.err.Error() }
func (e *unsettled) Unwrap() error { return e.err }

// Unsettled reports whether err is a failure after the whole request went
// out, with no answer, or a success status whose body could not be used:
// Proxmox may have carried the request out. An HTTP error status is never
// unsettled here (Proxmox, or a proxy, answered); callers judge the
// proxies' statuses themselves.
func Unsettled(err error) bool {
	var u *unsettled
	return errors.As(err, &u)
}
