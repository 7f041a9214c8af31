package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// The connection that Transport.Connect returns: a line reader that checks
// and decodes each line once (lines.go) and hands go-sdk the message it
// would have decoded itself (go-sdk's IOTransport behind an io.Pipe decoded
// every line twice more), the wait for the answers still owed at the end
// of input, and the writer (encode.go; a batch's answers, batch.go).

// conn is one newline-delimited JSON-RPC session on stdin/stdout.
type conn struct {
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

	// cancels holds back the answers to the requests the client cancelled
	// (notifications/cancelled) while go-sdk was serving them: go-sdk
	// answers them anyway.
	cancels rpcerr.Cancellations
}

// inbound is one valid line (a message or a batch), or the error that
// ended the input (io.EOF at its end).
type inbound struct {
	msg   jsonrpc.Message
	batch []jsonrpc.Message
	err   error
}

// readLines reads, checks and decodes lines until the input ends or the
// connection closes. An invalid line is answered here before the next
// line is read.
func (c *conn) readLines(r *bufio.Reader) {
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
func (c *conn) drain() bool {
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

// track records a request handed to go-sdk (open), the client's
// cancellation of one (before go-sdk reads it, so that its answer, which
// can only follow, is held back) or an answer to one of ours (asked);
// untrack records an answer we write or a request we send.
func (c *conn) track(msg jsonrpc.Message) {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			if c.open == nil {
				c.open = make(map[jsonrpc.ID]bool)
			}
			c.open[m.ID] = true
			c.cancels.Start(m.ID)
		} else if id, ok := rpcerr.CancelledID(m.Method, m.Params); ok {
			c.cancels.Cancel(id)
		}
	case *jsonrpc.Response:
		if c.asked[m.ID] {
			delete(c.asked, m.ID)
			c.signalAnswered()
		}
	}
}

func (c *conn) untrack(msg jsonrpc.Message) {
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
		} else if id, ok := rpcerr.CancelledID(m.Method, m.Params); ok {
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
func (c *conn) isOpen(id jsonrpc.ID) bool {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	return c.open[id]
}

// signalAnswered wakes drain without blocking; flightMu is held.
func (c *conn) signalAnswered() {
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
func (c *conn) check(line []byte, tooLong bool, version string) (in inbound, reply []byte, code int) {
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
func (c *conn) deliver(in inbound) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// Read returns the next message: io.EOF at the end of input or after
// Close.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
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

// Write writes msg as one line; the answers to a batch go out together,
// as one array, with the last of them. The answer to a request the
// client cancelled is not written (nor put in its batch's array).
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer c.untrack(msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		cancelled := c.cancels.Finish(resp.ID)
		batch, inBatch := c.answerBatch(resp, cancelled)
		if cancelled && !inBatch {
			return nil
		}
		if inBatch {
			if batch == nil || batch.empty() {
				return nil
			}
			line, err := batch.encode()
			if err != nil {
				return err
			}
			return c.writeLine(append(line, '\n'))
		}
	}
	if resp, ok := plainResult(msg); ok && len(resp.Result) >= writeAsIs {
		if head, ok := appendResultHead(nil, resp); ok {
			return c.writeLine(head, resp.Result, []byte(resultTail+"\n"))
		}
	}
	line, err := appendMessage(nil, msg)
	if err != nil {
		return err
	}
	return c.writeLine(append(line, '\n'))
}

// writeAsIs is the size from which a result is written from go-sdk's
// buffer, after its head and before its tail, instead of being copied
// into one line first: a copy of a large result (a tools/list of 40 to 80
// KB, the first answer a client asks for) is a second buffer of its size
// in fresh memory, a page fault every 4 KB, where two more writes cost
// less. Smaller results, most tool calls', are copied and written at once.
const writeAsIs = 16 << 10

// writeLine writes one whole line, from its parts in order, never
// interleaved with another.
func (c *conn) writeLine(parts ...[]byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	for _, p := range parts {
		if _, err := c.out.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// Close ends Read (io.EOF) and stops the line reader at its next line.
// Writes still go out: go-sdk may answer requests in flight.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *conn) SessionID() string { return "" }
