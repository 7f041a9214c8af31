package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// DefaultBodyReadTimeout bounds how long a client may take to send a
// request body, from the end of its headers. A tool call is a few hundred
// bytes; thirty seconds is generous for any real client and short enough
// that connections trickling a body one byte at a time cannot pile up.
const DefaultBodyReadTimeout = 30 * time.Second

// message is what the handler learned from a POST body that holds a single
// JSON-RPC message; batches and invalid JSON leave it zero (go-sdk answers
// those itself).
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"` // read by honourCancel
}

// call reports whether m is a request that expects an answer (it has an
// id), as opposed to a notification or a response.
func (m message) call() bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

type messageKey struct{}

func messageFrom(r *http.Request) message {
	m, _ := r.Context().Value(messageKey{}).(message)
	return m
}

// bodyDeadline starts the body-read clock for a request that may carry a
// body. It runs before authentication on purpose: an unauthenticated
// client that trickles a body must be cut off too, and net/http itself
// reads what a handler left unread after it returns. readBody clears the
// deadline once the body is in, so a long tool call is not cut.
func (h *Handler) bodyDeadline(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || h.bodyTimeout <= 0 {
		return
	}
	// Not every ResponseWriter supports deadlines (httptest.Recorder
	// does not); without one there is no connection to protect.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyTimeout))
}

// readBody enforces the media type the spec requires for POST (415), the
// body limit (413, before reading anything when the length is declared) and
// the body deadline (408, connection closed), then hands the body on as an
// in-memory copy and notes the JSON-RPC method for the checks after it.
func (h *Handler) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			h.reject(w, r, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
			return
		}
		if r.ContentLength > h.maxBody {
			h.reject(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", h.maxBody))
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		switch {
		case isTimeout(err):
			w.Header().Set("Connection", "close")
			h.reject(w, r, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s", h.bodyTimeout))
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			h.reject(w, r, http.StatusBadRequest, "could not read the request body")
			return
		case int64(len(b)) > h.maxBody:
			w.Header().Set("Connection", "close")
			h.reject(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", h.maxBody))
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = io.NopCloser(bytes.NewReader(b))
		r2.ContentLength = int64(len(b))
		var m message
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			_ = json.Unmarshal(b, &m) // invalid JSON: go-sdk answers it
			// A request that repeats a key outside a tool call's arguments
			// (which the server refuses itself, audited): go-sdk would
			// serve the last value, a reader keeping the first would see
			// another request. A response is left to go-sdk. The legacy
			// SSE transport answers on the event stream, not in the POST's
			// body, so there the POST itself is refused (400), as go-sdk
			// refuses a body it cannot parse.
			if path, repeated := rpcerr.RepeatedKey(b, true); repeated && m.Method != "" {
				if h.sse != nil {
					h.reject(w, r, http.StatusBadRequest, rpcerr.RepeatedKeyMessage(path))
					return
				}
				id := m.ID
				if path == "id" {
					id = nil
				}
				writeRPCError(w, id, jsonrpc.CodeInvalidRequest, rpcerr.RepeatedKeyMessage(path))
				return
			}
		}
		next.ServeHTTP(w, r2.WithContext(context.WithValue(r.Context(), messageKey{}, m)))
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()))
}
