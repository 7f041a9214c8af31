package mcphttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// writeRPCError answers a JSON-RPC call with an error object under HTTP 200,
// as a server answers a call it received and understood to be a call
// (the same encoding the stdio transport gives, from internal/jsonrpc).
func writeRPCError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	body := rpcerr.ErrorObject(id, code, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	w.Write(append(body, '\n'))
}

// refuseDiscover answers server/discover with "method not found" on a
// stateful endpoint. go-sdk serves protocol 2026-07-28 over HTTP only
// statelessly; on a stateful endpoint it used to answer discover with
// success and then refuse every 2026-07-28 request (-32022), so a client
// that trusts the successful discover could not work at all. "Method not
// found" is what every server from before 2026-07-28 answers, and what
// clients fall back from to the initialize handshake. With Stateless set,
// go-sdk serves discover and the 2026-07-28 protocol for real.
func (h *Handler) refuseDiscover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := messageFrom(r); m.call() && m.Method == "server/discover" {
			writeRPCError(w, m.ID, jsonrpc.CodeMethodNotFound, `method not found: "server/discover": this endpoint keeps sessions and serves protocol versions up to 2025-11-25 through initialize`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// methodNotFound turns go-sdk's answer to a call of an unknown method
// (HTTP 400, text/plain "JSON RPC not handled: …") into the JSON-RPC error
// -32601 that the stdio transport gives for the same call, so a client sees
// one behaviour on both transports. Any other 400 passes unchanged.
func (h *Handler) methodNotFound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := messageFrom(r)
		if !m.call() {
			next.ServeHTTP(w, r)
			return
		}
		rw := &notHandledWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		if !rw.held {
			return
		}
		if strings.HasPrefix(rw.buf.String(), "JSON RPC not handled") {
			writeRPCError(w, m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", m.Method))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		w.Write(rw.buf.Bytes())
	})
}

// notHandledWriter holds back a 400 text/plain answer until methodNotFound
// has looked at it; every other answer passes straight through (event
// streams included: Flush and Unwrap reach the real writer).
type notHandledWriter struct {
	http.ResponseWriter
	wrote, held bool
	buf         bytes.Buffer
}

func (w *notHandledWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code == http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *notHandledWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		if w.buf.Len() < 4096 { // an http.Error message; nothing large is held
			w.buf.Write(b)
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *notHandledWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held {
		f.Flush()
	}
}

func (w *notHandledWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
