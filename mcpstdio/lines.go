package mcpstdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// Reading and checking one inbound stdio line (conn.go owns the
// connection). Each line is decoded once, and that one decode both checks
// it against JSON-RPC 2.0 as go-sdk reads it (internal/jsonrpc2
// DecodeMessage) and builds the message go-sdk gets: a line go-sdk would
// refuse is answered here with the error the specification prescribes and
// never reaches it.

// JSON-RPC 2.0 error codes for messages that never reach a handler.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
)

// maxLine bounds one inbound line, as go-sdk's own reader does
// (mcp.DefaultMaxLineLength); a longer line is answered with -32600 and
// skipped.
const maxLine = mcp.DefaultMaxLineLength

// batchVersions are the protocol versions that allow JSON-RPC batches;
// 2025-06-18 removed them.
var batchVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// readLine returns the next line without its newline (and a CR before
// it). A line that fits in r's buffer is returned in place, valid until
// the next read: checkLine copies what it keeps. When the line is longer
// than maxLine it is read to its end and dropped: tooLong is set and
// line is nil.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	line, err = r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		line = bytes.Clone(line) // the next ReadSlice overwrites r's buffer
		for errors.Is(err, bufio.ErrBufferFull) {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if tooLong || len(line)+len(chunk) > maxLine+1 {
				tooLong, line = true, nil
				continue
			}
			line = append(line, chunk...)
		}
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, tooLong, err
}

// lineProblem is why a line is not a valid JSON-RPC message, and the id to
// answer with (null when it could not be read).
type lineProblem struct {
	code int
	msg  string
	id   json.RawMessage
}

var errTooLong = &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: the message is longer than the 16 MiB limit"}

// response is the JSON-RPC error answer to the line, one line.
func (p *lineProblem) response() []byte { return append(p.object(), '\n') }

// object is the JSON-RPC error answer as one JSON object (id null when
// the line's id could not be read): a line's answer, or an element of a
// batch's answer array.
func (p *lineProblem) object() []byte { return rpcerr.ErrorObject(p.id, p.code, p.msg) }

// batchMember is one element of a batch: its message, or the problem that
// makes it invalid. JSON-RPC 2.0 (section 6) answers each invalid member
// with its own error object in the batch's answer array and processes the
// valid ones; only a batch that is not a JSON array at all, or an empty
// one, gets a single error.
type batchMember struct {
	msg     jsonrpc.Message
	problem *lineProblem
}

// checkLine decodes a non-blank line: one message, or a batch when
// batches are allowed (the protocol version the client asked for allows
// them), or the problem to answer. A batch's members are checked one by
// one, each as a line alone is (decodeMessage); a request repeating the
// id of an earlier request of the same batch is invalid too, and its
// error carries id null: its id already names the earlier one's answer.
func checkLine(line []byte, batchesAllowed bool) (jsonrpc.Message, []batchMember, *lineProblem) {
	if first(line) != '[' {
		msg, p := decodeMessage(line)
		return msg, nil, p
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, nil, notJSON(err)
	}
	if !batchesAllowed {
		return nil, nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: JSON-RPC batches are not supported in protocol version 2025-06-18 and later; send one message per line"}
	}
	if len(raws) == 0 {
		return nil, nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: empty batch"}
	}
	batch := make([]batchMember, len(raws))
	calls := make(map[jsonrpc.ID]bool)
	for i, raw := range raws {
		msg, p := decodeMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); ok && p == nil && req.IsCall() {
			if calls[req.ID] {
				p = &lineProblem{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the batch has an earlier request with id %s; this one was not processed", idJSON(req.ID))}
			}
			calls[req.ID] = true
		}
		if p != nil {
			batch[i] = batchMember{problem: p}
			continue
		}
		batch[i] = batchMember{msg: msg}
	}
	return nil, batch, nil
}

// decodeMessage decodes one JSON-RPC 2.0 message as go-sdk does: member
// names match exactly (go-sdk decodes case-sensitively), "jsonrpc" is
// "2.0", an id is a string, a number (an integer as go-sdk keeps it) or
// null, a request has a string method, and a message without a method is
// a response with an id.
func decodeMessage(raw []byte) (jsonrpc.Message, *lineProblem) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if p := notJSON(err); p != nil {
			return nil, p
		}
		return nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: a JSON-RPC message must be a JSON object"}
	}
	rawID, hasID := m["id"]
	id, ok := decodeID(rawID)
	if hasID && !ok {
		return nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: id must be a string, a number or null"}
	}
	if v, ok := decodeString(m["jsonrpc"]); !ok || v != "2.0" {
		return nil, &lineProblem{code: codeInvalidRequest, msg: `Invalid Request: "jsonrpc" must be exactly "2.0"`, id: rawID}
	}
	if rawMethod, ok := m["method"]; ok {
		method, ok := decodeString(rawMethod)
		if !ok && string(rawMethod) != "null" { // go-sdk reads null as ""
			return nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: method must be a string", id: rawID}
		}
		if path, repeated := rpcerr.RepeatedKey(raw, true); repeated {
			return nil, repeatedKeyProblem(path, rawID)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: m["params"]}, nil
	}
	if !id.IsValid() {
		return nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: a message without a method must be a response with an id"}
	}
	resp := &jsonrpc.Response{ID: id, Result: m["result"]}
	if rawErr := m["error"]; rawErr != nil && string(rawErr) != "null" {
		e, ok := decodeError(rawErr)
		if !ok {
			return nil, &lineProblem{code: codeInvalidRequest, msg: "Invalid Request: error must be an object with a code and a message", id: rawID}
		}
		resp.Error = e
	}
	return resp, nil
}

// repeatedKeyProblem is the error of a request that repeats a key in one
// object (outside a tool call's arguments, which the server refuses
// itself): go-sdk would read the last value, another reader the first.
// The answer carries the request's id, or null when the id is what is
// repeated.
func repeatedKeyProblem(path string, rawID json.RawMessage) *lineProblem {
	if path == "id" {
		rawID = nil
	}
	return &lineProblem{code: codeInvalidRequest, msg: rpcerr.RepeatedKeyMessage(path), id: rawID}
}

// decodeError decodes a response's error object as go-sdk does: its
// member names match exactly ("Code" or "dAtA" is another member, which
// go-sdk ignores, where encoding/json would fill the field), the last of
// a repeated member wins, and the object's own members are checked for
// type (a code that is not an integer, a message that is not a string).
func decodeError(raw json.RawMessage) (*jsonrpc.Error, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	var e jsonrpc.Error
	if v, ok := m["code"]; ok && json.Unmarshal(v, &e.Code) != nil {
		return nil, false
	}
	if v, ok := m["message"]; ok && json.Unmarshal(v, &e.Message) != nil {
		return nil, false
	}
	if v, ok := m["data"]; ok {
		e.Data = v
	}
	return &e, true
}

// notJSON is the parse error for err when it says the input is not JSON
// at all, else nil.
func notJSON(err error) *lineProblem {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return &lineProblem{code: codeParseError, msg: "Parse error: the line is not valid JSON"}
	}
	return nil
}

// decodeID converts an id as go-sdk does (jsonrpc.MakeID of the value
// decoded into any: a number becomes an int64). A missing id is the zero
// ID. ok is false for anything but a string, a number or null.
func decodeID(raw json.RawMessage) (id jsonrpc.ID, ok bool) {
	if raw == nil || string(raw) == "null" {
		return jsonrpc.ID{}, true
	}
	var v any
	if s, ok := decodeString(raw); ok {
		v = s
	} else if f, err := strconv.ParseFloat(string(raw), 64); err == nil { // raw is JSON: a number here
		v = f
	} else {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// idJSON is an id as JSON, for a message.
func idJSON(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// decodeString decodes a JSON string. Plain ASCII without escapes, as
// method names and version tags are, is copied without a decoder.
func decodeString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			plain = false
			break
		}
	}
	if plain && raw[len(raw)-1] == '"' {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// first is the first byte of line that is not JSON whitespace, or 0.
func first(line []byte) byte {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// initializeVersion returns the protocolVersion of an initialize request.
func initializeVersion(msg jsonrpc.Message) (string, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" {
		return "", false
	}
	var params struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if req.Params != nil && json.Unmarshal(req.Params, &params) != nil {
		return "", false
	}
	return params.ProtocolVersion, true
}
