// Package jsonrpc encodes the JSON-RPC 2.0 error answers that the module's
// MCP transports write themselves, for messages go-sdk never sees or would
// answer otherwise: a stdio line that is not a valid JSON-RPC message
// (package mcpstdio), an HTTP request refused before it reaches the server
// or a method the handler answers itself (package mcphttp).
//
// The encoding lives here once so that both transports answer the same
// mistake with the same bytes. The error codes are go-sdk's
// (jsonrpc.CodeParseError and the others); messages, requests and
// responses that do reach go-sdk are encoded by go-sdk.
package jsonrpc
