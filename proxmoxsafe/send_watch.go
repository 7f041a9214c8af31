package proxmoxsafe

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// Whether a call may have changed something is a fact of the wire, not of
// the error it ends with: a mutation whose state read timed out and one
// whose POST timed out both end in an upstream error, and only the second
// may have been carried out. The transport guard, which every request of a
// Client passes, records the fact where the caller asked for it.

// SendWatch records whether a mutating request — any request but a read
// (GET, HEAD) and the ticket login — may have left the process during the
// calls made with the context [WatchSends] returned. A request counts from
// the moment it has a connection to Proxmox: a request refused by the
// transport guard, a failed dial or TLS handshake, or a context that ended
// before a connection was had, sent nothing. With an HTTPClient whose
// Transport is not an *http.Transport (whose connections cannot be traced)
// a mutating request counts as soon as the guard lets it through.
//
// A SendWatch is safe for concurrent use; its zero value has seen nothing.
type SendWatch struct {
	sent atomic.Bool
}

// MutatingSent reports whether a mutating request may have reached Proxmox:
// false means it is certain that none did.
func (w *SendWatch) MutatingSent() bool { return w.sent.Load() }

type sendWatchKey struct{}

// WatchSends returns ctx with a [SendWatch] that this package's calls made
// with the returned context (or one derived from it) report their
// mutating requests to. When ctx already carries one, it is returned
// unchanged with that watch, so layers that each ask see the same record.
func WatchSends(ctx context.Context) (context.Context, *SendWatch) {
	if w := SendWatchFrom(ctx); w != nil {
		return ctx, w
	}
	w := new(SendWatch)
	return context.WithValue(ctx, sendWatchKey{}, w), w
}

// SendWatchFrom returns the [SendWatch] ctx carries, or nil.
func SendWatchFrom(ctx context.Context) *SendWatch {
	w, _ := ctx.Value(sendWatchKey{}).(*SendWatch)
	return w
}

// watchSend makes req report to the watch its context carries, if any,
// once it may leave the process (see SendWatch); reads and the login are
// not watched. traced says whether the next transport honours
// httptrace (an *http.Transport): then the mark waits for the connection,
// else it is made at once.
func (g *guard) watchSend(req *http.Request) *http.Request {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		return req
	}
	if req.Method == http.MethodPost && req.URL.EscapedPath() == g.basePath+"/access/ticket" {
		return req
	}
	w := SendWatchFrom(req.Context())
	if w == nil || w.sent.Load() {
		return req
	}
	if !g.traced {
		w.sent.Store(true)
		return req
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { w.sent.Store(true) }}
	return req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
}
