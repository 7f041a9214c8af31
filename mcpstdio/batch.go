package mcpstdio

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A batch's answers (conn.go reads and writes; lines.go checks the
// members): which answers belong to which batch, and the one array that
// answers it once its last request is answered.

// pendingBatch collects the answers to one inbound batch, in the order of
// its members, until all have come: the errors of its invalid members,
// known at once, and the responses to its requests.
type pendingBatch struct {
	index   map[jsonrpc.ID]int // the slot of each request's answer
	slots   []batchSlot
	missing int
}

// batchSlot is one answer in a batch's array: a response from go-sdk, or
// an invalid member's error object, already encoded. A dropped slot is
// the answer to a request the client cancelled: it is left out.
type batchSlot struct {
	resp    *jsonrpc.Response
	encoded []byte
	dropped bool
}

// addBatch records which answers belong to a batch and returns its valid
// messages, in order. A request whose id an earlier request (alone or in
// a batch) still waits for is invalid: its answer could not be told
// apart, so its error carries id null. When the batch has no valid
// request, the errors of its invalid members are returned as the one line
// to answer now (nil when it has none); else they wait in the batch for
// its requests' answers, and code is the first invalid member's error
// code (0 when every member is valid).
func (c *conn) addBatch(members []batchMember) (valid []jsonrpc.Message, now []byte, code int) {
	b := &pendingBatch{index: make(map[jsonrpc.ID]int)}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for _, m := range members {
		req, _ := m.msg.(*jsonrpc.Request)
		call := m.problem == nil && req != nil && req.IsCall()
		if call && c.isOpen(req.ID) {
			m.problem = &lineProblem{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the batch repeats id %s of an unanswered request; this one was not processed", idJSON(req.ID))}
			call = false
		}
		if m.problem != nil {
			if code == 0 {
				code = m.problem.code
			}
			b.slots = append(b.slots, batchSlot{encoded: m.problem.object()})
			continue
		}
		valid = append(valid, m.msg)
		if call {
			b.index[req.ID] = len(b.slots)
			b.slots = append(b.slots, batchSlot{})
			b.missing++
		}
	}
	if b.missing == 0 {
		if code == 0 {
			return valid, nil, 0 // notifications and responses only: nothing to answer
		}
		line, _ := b.encode() // errors only: encoded already
		return valid, append(line, '\n'), code
	}
	if c.batches == nil {
		c.batches = make(map[jsonrpc.ID]*pendingBatch)
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return valid, nil, code
}

// empty reports whether every answer of the batch was dropped: then
// nothing is written (JSON-RPC 2.0 section 6: never an empty array).
func (b *pendingBatch) empty() bool {
	for _, slot := range b.slots {
		if !slot.dropped {
			return false
		}
	}
	return true
}

// encode is the batch's answer array, every slot filled, without the
// dropped ones.
func (b *pendingBatch) encode() ([]byte, error) {
	line := []byte{'['}
	for _, slot := range b.slots {
		if slot.dropped {
			continue
		}
		if len(line) > 1 {
			line = append(line, ',')
		}
		if slot.encoded != nil {
			line = append(line, slot.encoded...)
			continue
		}
		var err error
		if line, err = appendMessage(line, slot.resp); err != nil {
			return nil, err
		}
	}
	return append(line, ']'), nil
}

// answerBatch records resp when it answers a batch request (inBatch), or
// drops its slot when the client cancelled the request, and returns the
// batch once resp completes it.
func (c *conn) answerBatch(resp *jsonrpc.Response, drop bool) (complete *pendingBatch, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	slot := &b.slots[b.index[resp.ID]]
	slot.resp, slot.dropped = resp, drop
	if b.missing--; b.missing > 0 {
		return nil, true
	}
	return b, true
}
