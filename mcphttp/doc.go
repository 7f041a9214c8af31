// Package mcphttp serves an [mcp.Server] over MCP streamable HTTP with the
// checks the MCP specification asks for and go-sdk does not do by itself.
//
// go-sdk's [mcp.StreamableHTTPHandler] checks the Host header only when the
// connection arrives on a loopback address, checks no Origin header at all,
// and leaves authentication to the caller. [New] wraps it so that, on every
// method (POST, GET and DELETE):
//
//   - a request whose Origin header is present and not on
//     [Options.AllowedOrigins] is refused with 403, including "null" and
//     look-alikes such as http://localhost.evil.example (the spec's DNS
//     rebinding and cross-site rule; browsers always send Origin, other
//     clients usually send none);
//   - a request whose Host header is neither the address the connection
//     arrived on nor one of [Options.AllowedHosts] is refused with 403, on
//     loopback and non-loopback addresses alike;
//   - a bearer token is required when [Options.TokenVerifier] is set
//     (go-sdk's [auth.RequireBearerToken]): 401 with WWW-Authenticate
//     otherwise. Tokens are read from the Authorization header only, never
//     from the query string. Sessions are bound to [auth.TokenInfo.UserID],
//     so one identity cannot use another's session (403). Without a
//     verifier, only loopback connections are served, unless
//     [Options.AllowUnauthenticatedRemote] says an authenticating proxy sits
//     in front;
//   - a POST must be application/json (415) and at most
//     [Options.MaxRequestBodyBytes] long (413).
//
// The Authorization header is removed from the request once it has been
// verified, so neither go-sdk nor a tool handler can see, log or forward the
// client's token. Nothing in this package reads Proxmox credentials from a
// request: the upstream credential is configured server-side only.
//
// With [Options.Pages] it also serves browser pages under a path of their
// own (the operator's approval page, package approvalweb) behind the same
// Host check, without the bearer-token check (pages log their users in
// themselves) and without the Authorization header.
//
// The handler also answers GET /healthz (no authentication; the body is just
// "ok") for supervisors, and, when [Options.ResourceMetadata] is set, the
// RFC 9728 protected resource metadata under /.well-known/.
//
// With [Options.LegacySSE] it serves the deprecated HTTP+SSE transport of
// protocol 2024-11-05 instead, behind the same checks, with sessions bound
// to the identity that opened them.
//
// It also bounds what one client can hold: sessions per identity
// ([Options.MaxSessionsPerIdentity]), requests in flight
// ([Options.MaxInFlight]) and the time a request body may take
// ([Options.BodyReadTimeout]). Browser origins on [Options.AllowedOrigins]
// get CORS headers and their preflights are answered before
// authentication; the origin of the loopback address the connection
// arrived on is accepted without being listed.
//
// A call the client cancels (notifications/cancelled) while the server
// serves it gets no answer, as the MCP specification asks (go-sdk would
// answer it with its handler's error): on a stateful streamable HTTP
// endpoint its POST's event stream ends without it, and on the legacy
// SSE transport the session's stream never carries it. A stateless
// endpoint has no session for a notification to name a call of.
//
// [Handler.Shutdown] stops taking requests, waits for the ones in flight and
// closes the sessions this handler created; use it together with
// [http.Server.Shutdown].
package mcphttp
