package jsonrpc

import "encoding/json"

// ErrorObject is the JSON-RPC 2.0 error answer
// {"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}} as one compact
// JSON object without a trailing newline: a line of its own on stdio, an
// HTTP body, or an element of a batch's answer array. An empty id is
// written as null, the id JSON-RPC 2.0 prescribes when the message's own
// id could not be read; any other id must be valid JSON and is copied as
// it is. The message is escaped as encoding/json escapes strings.
func ErrorObject(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(errorAnswer{JSONRPC: "2.0", ID: id, Error: errorBody{Code: code, Message: message}})
	if err != nil {
		// Only an id that is not valid JSON gets here: a caller's bug, and
		// still an answer the client can read.
		b, _ = json.Marshal(errorAnswer{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorBody{Code: code, Message: message}})
	}
	return b
}

type errorAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   errorBody       `json:"error"`
}

type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
