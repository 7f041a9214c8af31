// Package jsonrpc is the JSON-RPC 2.0 that the module's MCP transports
// share. It encodes the error answers they write themselves, for messages
// go-sdk never sees or would answer otherwise: a stdio line that is not a
// valid JSON-RPC message (package mcpstdio), an HTTP request refused
// before it reaches the server or a method the handler answers itself
// (package mcphttp).
//
// The encoding lives here once so that both transports answer the same
// mistake with the same bytes. The error codes are go-sdk's
// (jsonrpc.CodeParseError and the others); messages, requests and
// responses that do reach go-sdk are encoded by go-sdk.
//
// It finds a key repeated in one JSON object ([RepeatedKey]): the
// transports refuse such requests and the MCP adapter such tool
// arguments, since go-sdk keeps the last value where other readers keep
// the first.
//
// It also holds what every transport needs to honour a client's
// notifications/cancelled ([Cancellations]): go-sdk answers a cancelled
// request anyway, and only the transport can hold that answer back.
package jsonrpc
