package jsonrpc

import (
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MethodCancelled is the notification by which either side of an MCP
// session gives up on a request it sent.
const MethodCancelled = "notifications/cancelled"

// CancelledID is the id of the request a notifications/cancelled with
// these params names; false for any other method, or when the params name
// no valid id.
func CancelledID(method string, params json.RawMessage) (sdk.ID, bool) {
	if method != MethodCancelled {
		return sdk.ID{}, false
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return sdk.ID{}, false
	}
	id, err := sdk.MakeID(p.RequestID)
	return id, err == nil && id.IsValid()
}

// Cancellations tells a transport which answers not to send: those to the
// requests its client cancelled while they were in flight. The MCP
// specification says a server should not answer a request once its
// client has sent notifications/cancelled for it (the client has
// forgotten the id and may report an answer to it as an error), but
// go-sdk answers every request, cancelled or not: its jsonrpc2 layer
// writes whatever the handler returns, usually the context's error. Only
// the transport sees both the notification coming in and the answer going
// out, so each transport holds one Cancellations per session:
//
//   - Start when it hands a request with an id to the server,
//   - Cancel when it reads a notifications/cancelled, before handing that
//     on (go-sdk cancels the handler as soon as it reads it, so the answer
//     can only follow the mark),
//   - Finish when the server writes the answer to a request: true means
//     the client cancelled it, and the answer is dropped.
//
// A notification that names a request already answered, or one never
// seen, changes nothing: the answer went out before the client gave up,
// which the specification allows. The zero value is ready to use.
type Cancellations struct {
	mu       sync.Mutex
	inFlight map[sdk.ID]bool // by id: whether the client cancelled it
}

// Start records a request the server has been handed and not answered.
// A new request with the id of an earlier one starts uncancelled.
func (c *Cancellations) Start(id sdk.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight == nil {
		c.inFlight = make(map[sdk.ID]bool)
	}
	c.inFlight[id] = false
}

// Cancel marks the request with id cancelled, and reports whether it was
// in flight.
func (c *Cancellations) Cancel(id sdk.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.inFlight[id]; !ok {
		return false
	}
	c.inFlight[id] = true
	return true
}

// Finish forgets the request with id, answered (or given up on by the
// transport), and reports whether its client cancelled it: then its answer
// must not be sent.
func (c *Cancellations) Finish(id sdk.ID) (cancelled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cancelled = c.inFlight[id]
	delete(c.inFlight, id)
	return cancelled
}

// Len is the number of requests in flight.
func (c *Cancellations) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inFlight)
}
