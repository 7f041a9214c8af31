// Package mcpstdio serves an [mcp.Server] over newline-delimited JSON-RPC
// on a reader and a writer (stdin and stdout), answering a bad line
// instead of dying.
//
// go-sdk's own stdio transports ([mcp.StdioTransport], [mcp.IOTransport])
// end the whole session when one inbound line is not a valid JSON-RPC
// message (not JSON, "jsonrpc":"1.0", a batch on protocol 2025-06-18 and
// later): the reader returns an error and the server exits with no reply.
// A client bug or a stray line must not take down a server that other
// work depends on, so the [Transport] returned by [NewTransport] reads its
// input itself, one line at a time, answers each invalid line with the
// JSON-RPC error the specification prescribes (-32700 parse error, -32600
// invalid request) and hands only valid messages to go-sdk:
//
//	t := mcpstdio.NewTransport(os.Stdin, os.Stdout, &mcpstdio.Options{Logger: logger})
//	err := server.Run(ctx, t) // nil when the client closes stdin
//
// What it does that go-sdk's transports do not:
//
//   - Every line is checked as go-sdk's decoder reads it (member names
//     match exactly, "jsonrpc" is "2.0", an id is a string, a number or
//     null, a method is a string) and decoded once, into the message
//     go-sdk gets. A line longer than [mcp.DefaultMaxLineLength] (16 MiB)
//     is answered with -32600 and skipped; blank lines and a CR before the
//     newline are ignored.
//   - Batches work when the protocol version the client asked for in
//     initialize allows them (2024-11-05 and 2025-03-26), member by member
//     as JSON-RPC 2.0 section 6 says: each invalid member
//     gets its own error object in the batch's answer array and the valid
//     members are processed (go-sdk refuses a whole batch for one bad
//     member). The answers go out as one array once every request of the
//     batch is answered. A request repeating the id of an earlier request
//     of the batch, or of a request still unanswered, is not processed
//     and is answered with id null, since its id already names the other
//     answer. A batch that is not valid JSON, an empty one, or one on
//     a later protocol version gets a single error.
//   - At the end of input the session ends only once every request
//     handed to go-sdk has been answered (go-sdk cancels what is still
//     running when its input ends, which could cut a mutation between its
//     submission and its outcome), unless the server is itself waiting for
//     an answer from the client, which can no longer come.
//   - A request the client cancels (notifications/cancelled) while go-sdk
//     serves it gets no answer, as the MCP specification asks: go-sdk
//     cancels the handler's context and then writes whatever it returns,
//     usually the context's error, to a client that has forgotten the id.
//     A batch's answer array leaves such answers out. A cancellation that
//     arrives after the answer went out changes nothing.
//   - A result go-sdk has already marshalled is written as it is, without
//     being compacted again.
//
// The connection learns the protocol version from the client's initialize
// request (go-sdk tells its own connections the negotiated version through
// an unexported method); that is the negotiated version whenever it allows
// batches, since go-sdk supports both versions that do.
package mcpstdio
