package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio framing (issue 8, "Secrets and crashes"): go-sdk ends the whole
// session when one inbound line is not a valid JSON-RPC message (not JSON,
// "jsonrpc":"1.0", a batch on 2025-06-18 and later): its reader returns an
// error and the server exits with no reply. A client bug or a stray line
// must not take down a server that other work depends on, so
// lineCheckTransport reads stdin itself, one line at a time, answers each
// invalid line with the JSON-RPC error the specification prescribes
// (-32700 parse error, -32600 invalid request) and passes only valid lines
// on to go-sdk.

// JSON-RPC 2.0 error codes for messages that never reach a handler.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxStdioLine bounds one inbound line, as go-sdk's own reader does
// (mcp.DefaultMaxLineLength); a longer line is answered with -32600 and
// skipped.
const maxStdioLine = mcp.DefaultMaxLineLength

// batchVersions are the protocol versions that allow JSON-RPC batches;
// 2025-06-18 removed them.
var batchVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// lineCheckTransport is an mcp.Transport over a reader and a writer that
// answers invalid lines itself and keeps serving.
type lineCheckTransport struct {
	in  io.Reader
	out io.Writer
	log *slog.Logger
	// done is closed when the line reader has stopped: after stdin ended or
	// the session closed the pipe to go-sdk.
	done chan struct{}
}

func newLineCheckTransport(in io.Reader, out io.Writer, log *slog.Logger) *lineCheckTransport {
	return &lineCheckTransport{in: in, out: out, log: log, done: make(chan struct{})}
}

// Connect starts the line reader and returns go-sdk's own connection over
// the valid lines.
func (t *lineCheckTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: t.out}
	go func() {
		defer close(t.done)
		err := t.pump(pw, w)
		pw.CloseWithError(err) // nil: EOF for go-sdk, which ends the session cleanly
	}()
	inner := &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{w}, MaxLineLength: -1}
	return inner.Connect(ctx)
}

// lockedWriter serializes whole writes: go-sdk writes each message with one
// Write call, and so does pump, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// pump copies valid lines from t.in to valid and answers invalid ones on
// out. It returns nil at the end of input, or the error that stopped it.
func (t *lineCheckTransport) pump(valid io.Writer, out io.Writer) error {
	r := bufio.NewReaderSize(t.in, 64*1024)
	var version string // the protocol version the client asked for in initialize
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var problem *lineProblem
			if tooLong {
				problem = &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: the message is longer than the 16 MiB limit"}
			} else {
				problem = checkLine(line, version)
			}
			if problem != nil {
				t.log.Warn("answered an invalid JSON-RPC line with an error and kept serving", slog.Int("code", problem.code))
				if _, werr := out.Write(problem.response()); werr != nil {
					return werr
				}
			} else {
				if v, ok := initializeVersion(line); ok {
					version = v
				}
				// Only the message itself: go-sdk ends the session on
				// anything but a newline after a JSON value ("invalid
				// trailing data"), and json.Valid accepts trailing
				// spaces and tabs.
				if _, werr := valid.Write(append(bytes.TrimSpace(line), '\n')); werr != nil {
					return werr // the session closed its end
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readLine returns the next line without its newline. When the line is
// longer than maxStdioLine it is read to its end and dropped: tooLong is
// set and line is nil.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxStdioLine+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong, err
	}
}

// lineProblem is why a line is not a valid JSON-RPC message, and the id to
// answer with (null when it could not be read).
type lineProblem struct {
	code int
	msg  string
	id   json.RawMessage
}

func (p *lineProblem) response() []byte {
	id := p.id
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{p.code, p.msg}})
	return append(b, '\n')
}

// wireMessage is what checkLine needs of a message.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
}

// checkLine returns nil when go-sdk can read line, else the error to
// answer. version is the protocol version the client asked for, which
// decides whether a batch is allowed.
func checkLine(line []byte, version string) *lineProblem {
	if !json.Valid(line) {
		return &lineProblem{code: codeParseError, msg: "Parse error: the line is not valid JSON"}
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		if !batchVersions[version] {
			return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: JSON-RPC batches are not supported in protocol version 2025-06-18 and later; send one message per line"}
		}
		var batch []json.RawMessage
		_ = json.Unmarshal(trimmed, &batch)
		if len(batch) == 0 {
			return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: empty batch"}
		}
		for _, m := range batch {
			if p := checkMessage(m); p != nil {
				p.id = nil // the batch as a whole is refused
				return p
			}
		}
		return nil
	}
	return checkMessage(trimmed)
}

// checkMessage checks one message object against JSON-RPC 2.0 as go-sdk
// decodes it (internal/jsonrpc2 DecodeMessage).
func checkMessage(raw json.RawMessage) *lineProblem {
	var m wireMessage
	if bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: a JSON-RPC message must be a JSON object"}
	}
	id := validID(m.ID)
	if m.ID != nil && id == nil {
		return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: id must be a string, a number or null"}
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		return &lineProblem{code: codeInvalidRequest, msg: `Invalid Request: "jsonrpc" must be exactly "2.0"`, id: id}
	}
	if m.Method != nil {
		var method string
		if json.Unmarshal(m.Method, &method) != nil {
			return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: method must be a string", id: id}
		}
		return nil
	}
	if id == nil || string(id) == "null" {
		return &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: a message without a method must be a response with an id"}
	}
	return nil
}

// validID returns the id as sent when it is a string, a number or null,
// else nil.
func validID(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case nil, string, float64:
		return raw
	}
	return nil
}

// initializeVersion returns the protocolVersion of an initialize request.
func initializeVersion(line []byte) (string, bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return "", false
	}
	return m.Params.ProtocolVersion, true
}
