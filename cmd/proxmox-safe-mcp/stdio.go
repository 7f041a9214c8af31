package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio framing (issue 8, "Secrets and crashes"): go-sdk ends the whole
// session when one inbound line is not a valid JSON-RPC message (not JSON,
// "jsonrpc":"1.0", a batch on 2025-06-18 and later): its reader returns an
// error and the server exits with no reply. A client bug or a stray line
// must not take down a server that other work depends on, so
// lineCheckTransport reads stdin itself, one line at a time, answers each
// invalid line with the JSON-RPC error the specification prescribes
// (-32700 parse error, -32600 invalid request) and hands only valid
// messages to go-sdk.
//
// It is its own mcp.Connection (issue 14): each line is decoded once, into
// the message go-sdk gets (stdio_lines.go), where go-sdk's IOTransport
// decoded every line twice more behind an io.Pipe; and a result go-sdk has
// already marshalled is written as it is instead of being compacted again.
// Batches work as in go-sdk's ioConn (mcp/transport.go), on the protocol
// versions that allow them: the answers to a batch's requests go out as one
// array once all are answered. Unlike go-sdk, which refuses a whole batch
// for one bad member, each invalid member gets its own error object in
// that array and the valid members are processed (JSON-RPC 2.0 section
// 6). go-sdk tells its own connection the negotiated version (an
// unexported method); this one takes the version the client asked for in
// initialize, which is the negotiated one whenever it allows batches (the
// server supports both versions that do).

// lineCheckTransport is an mcp.Transport over a reader and a writer that
// answers invalid lines itself and keeps serving.
type lineCheckTransport struct {
	in  io.Reader
	out io.Writer
	log *slog.Logger
}

func newLineCheckTransport(in io.Reader, out io.Writer, log *slog.Logger) *lineCheckTransport {
	return &lineCheckTransport{in: in, out: out, log: log}
}

// Connect starts the line reader and returns the connection.
func (t *lineCheckTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		out:      t.out,
		log:      t.log,
		incoming: make(chan inbound),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
	}
	go c.readLines(bufio.NewReaderSize(t.in, 64*1024))
	return c, nil
}

// stdioConn is one newline-delimited JSON-RPC session on stdin/stdout.
type stdioConn struct {
	out io.Writer
	log *slog.Logger

	// incoming carries what the line reader decoded, one line at a time,
	// so that Read can also wait for Close: a read of stdin cannot be
	// interrupted.
	incoming chan inbound
	// queue is the rest of the last batch; only Read uses it.
	queue []jsonrpc.Message

	writeMu sync.Mutex // one whole line per Write

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*pendingBatch // by the id of each unanswered request

	closeOnce sync.Once
	closed    chan struct{}

	// The end of input waits for the answers still owed (see drain).
	// open holds the ids of the client's requests handed to go-sdk and not
	// yet answered, asked those of our requests to the client not yet
	// answered; answered is signalled when either shrinks.
	flightMu sync.Mutex
	open     map[jsonrpc.ID]bool
	asked    map[jsonrpc.ID]bool
	answered chan struct{}
}

// inbound is one valid line (a message or a batch), or the error that
// ended the input (io.EOF at its end).
type inbound struct {
	msg   jsonrpc.Message
	batch []jsonrpc.Message
	err   error
}

// pendingBatch collects the answers to one inbound batch, in the order of
// its members, until all have come: the errors of its invalid members,
// known at once, and the responses to its requests.
type pendingBatch struct {
	index   map[jsonrpc.ID]int // the slot of each request's answer
	slots   []batchSlot
	missing int
}

// batchSlot is one answer in a batch's array: a response from go-sdk, or
// an invalid member's error object, already encoded.
type batchSlot struct {
	resp    *jsonrpc.Response
	encoded []byte
}

// readLines reads, checks and decodes lines until the input ends or the
// connection closes. An invalid line is answered here before the next
// line is read.
func (c *stdioConn) readLines(r *bufio.Reader) {
	var version string // the protocol version the client asked for in initialize
	for {
		select {
		case <-c.closed:
			return
		default:
		}
		line, tooLong, err := readLine(r)
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			in, reply, code := c.check(line, tooLong, version)
			if code != 0 {
				c.log.Warn("an invalid JSON-RPC line or batch member gets an error answer; kept serving", slog.Int("code", code))
			}
			if reply != nil {
				if werr := c.writeLine(reply); werr != nil {
					c.deliver(inbound{err: werr})
					return
				}
			}
			if in.msg != nil || len(in.batch) > 0 {
				if v, ok := initializeVersion(in.msg); ok {
					version = v
				}
				if in.batch != nil {
					for _, m := range in.batch {
						c.track(m)
					}
				} else {
					c.track(in.msg)
				}
				if !c.deliver(in) {
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && !c.drain() {
				return
			}
			c.deliver(inbound{err: err}) // io.EOF ends the session cleanly
			return
		}
	}
}

// drain waits, at the end of input, until every request the client sent
// has been answered, and reports false when the connection closed first.
// A client that writes its requests and closes stdin, as the stdio
// transport's shutdown allows (close the input, then wait for the server
// to exit), gets its answers: go-sdk cancels every request still running
// when the connection's Read reports the end, so handing it io.EOF at
// once lost them, and could cut a mutation between its submission and its
// outcome. The wait ends early when the server is itself waiting for an
// answer from the client (an elicitation): none can come any more. A
// signal (SIGINT, SIGTERM) still ends the session at once: it cancels
// the server, which closes the connection.
func (c *stdioConn) drain() bool {
	for {
		c.flightMu.Lock()
		done := len(c.open) == 0 || len(c.asked) > 0
		c.flightMu.Unlock()
		if done {
			return true
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return false
		}
	}
}

// track records a request handed to go-sdk (open) or an answer to one of
// ours (asked); untrack records an answer we write or a request we send.
func (c *stdioConn) track(msg jsonrpc.Message) {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			if c.open == nil {
				c.open = make(map[jsonrpc.ID]bool)
			}
			c.open[m.ID] = true
		}
	case *jsonrpc.Response:
		if c.asked[m.ID] {
			delete(c.asked, m.ID)
			c.signalAnswered()
		}
	}
}

func (c *stdioConn) untrack(msg jsonrpc.Message) {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if c.open[m.ID] {
			delete(c.open, m.ID)
			c.signalAnswered()
		}
	case *jsonrpc.Request:
		if m.IsCall() {
			if c.asked == nil {
				c.asked = make(map[jsonrpc.ID]bool)
			}
			c.asked[m.ID] = true
			c.signalAnswered()
		} else if id, ok := cancelledID(m); ok {
			// go-sdk gave up on one of ours (its caller's context ended,
			// e.g. the tool call that elicited was cancelled) and retired
			// it: no answer is awaited any more, so it must not make the
			// end of input skip the wait for the answers still owed.
			delete(c.asked, id)
		}
	}
}

// isOpen reports whether a request of the client with id is unanswered:
// handed to go-sdk (track) and not yet answered (untrack).
func (c *stdioConn) isOpen(id jsonrpc.ID) bool {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	return c.open[id]
}

// cancelledID is the request id a notifications/cancelled names.
func cancelledID(req *jsonrpc.Request) (jsonrpc.ID, bool) {
	if req.Method != "notifications/cancelled" {
		return jsonrpc.ID{}, false
	}
	var params struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &params) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(params.RequestID)
	return id, err == nil && id.IsValid()
}

// signalAnswered wakes drain without blocking; flightMu is held.
func (c *stdioConn) signalAnswered() {
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// check decodes one non-blank line and registers a batch's requests. It
// returns what go-sdk gets (nothing for an invalid line or a batch with no
// valid member) and what to answer at once, with the error code for the
// log: the error of an invalid line, or the errors of a batch's invalid
// members when the batch has no valid request (else they go out with its
// requests' answers).
func (c *stdioConn) check(line []byte, tooLong bool, version string) (in inbound, reply []byte, code int) {
	if tooLong {
		return inbound{}, errTooLong.response(), errTooLong.code
	}
	msg, batch, problem := checkLine(line, batchVersions[version])
	if problem != nil {
		return inbound{}, problem.response(), problem.code
	}
	if batch != nil {
		valid, reply, code := c.addBatch(batch)
		return inbound{batch: valid}, reply, code
	}
	return inbound{msg: msg}, nil, 0
}

// deliver hands in to Read; false when the connection closed first.
func (c *stdioConn) deliver(in inbound) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message: io.EOF at the end of input or after
// Close.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case in := <-c.incoming:
		if in.err != nil {
			return nil, in.err
		}
		if in.batch != nil {
			c.queue = in.batch[1:]
			return in.batch[0], nil
		}
		return in.msg, nil
	}
}

// addBatch records which answers belong to a batch and returns its valid
// messages, in order. A request whose id an earlier request (alone or in
// a batch) still waits for is invalid: its answer could not be told
// apart, so its error carries id null. When the batch has no valid request, the errors of its invalid
// members are returned as the one line to answer now (nil when it has
// none); else they wait in the batch for its requests' answers, and code
// is the first invalid member's error code (0 when every member is valid).
func (c *stdioConn) addBatch(members []batchMember) (valid []jsonrpc.Message, now []byte, code int) {
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

// encode is the batch's answer array, every slot filled.
func (b *pendingBatch) encode() ([]byte, error) {
	line := []byte{'['}
	for i, slot := range b.slots {
		if i > 0 {
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

// answerBatch records resp when it answers a batch request (inBatch), and
// returns the batch once resp completes it.
func (c *stdioConn) answerBatch(resp *jsonrpc.Response) (complete *pendingBatch, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	b.slots[b.index[resp.ID]].resp = resp
	if b.missing--; b.missing > 0 {
		return nil, true
	}
	return b, true
}

// Write writes msg as one line; the answers to a batch go out together,
// as one array, with the last of them.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer c.untrack(msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if batch, inBatch := c.answerBatch(resp); inBatch {
			if batch == nil {
				return nil
			}
			line, err := batch.encode()
			if err != nil {
				return err
			}
			return c.writeLine(append(line, '\n'))
		}
	}
	line, err := appendMessage(nil, msg)
	if err != nil {
		return err
	}
	return c.writeLine(append(line, '\n'))
}

// writeLine writes one whole line, never interleaved with another.
func (c *stdioConn) writeLine(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(line)
	return err
}

// Close ends Read (io.EOF) and stops the line reader at its next line.
// Writes still go out: go-sdk may answer requests in flight.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *stdioConn) SessionID() string { return "" }

// appendMessage appends msg as JSON-RPC. A successful response's result
// comes from go-sdk's json.Marshal (jsonrpc2.NewResponse), so it is
// already compact, valid JSON with no newline: it is copied as it is,
// where jsonrpc.EncodeMessage would scan and compact it again. Anything
// else (errors, requests, notifications, ids that need escaping) goes
// through jsonrpc.EncodeMessage.
func appendMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && len(resp.Result) > 0 && bytes.IndexByte(resp.Result, '\n') < 0 {
		line := slices.Grow(dst, len(resp.Result)+64)
		if line, ok := appendPlainID(append(line, `{"jsonrpc":"2.0","id":`...), resp.ID); ok {
			line = append(line, `,"result":`...)
			line = append(line, resp.Result...)
			return append(line, '}'), nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	if len(dst) == 0 {
		return data, nil
	}
	return append(dst, data...), nil
}

// appendPlainID appends an int64 id, or a string id that needs no escape;
// ok is false for anything else.
func appendPlainID(dst []byte, id jsonrpc.ID) ([]byte, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case string:
		for i := range len(v) {
			if c := v[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return nil, false
			}
		}
		dst = append(dst, '"')
		dst = append(dst, v...)
		return append(dst, '"'), true
	}
	return nil, false
}
