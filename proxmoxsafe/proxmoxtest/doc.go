// Package proxmoxtest provides a fake Proxmox VE API server for tests.
//
// It is modelled on [net/http/httptest]: [NewServer] starts a loopback HTTPS
// server with a self-signed certificate, [NewUnstartedServer] lets options be
// set first, and [Server.Close] blocks until in-flight requests finish. The
// server keeps a mutable [Cluster] model (nodes, guests, snapshots, tokens)
// and answers the subset of /api2/json that proxmox-safe-mcp uses the way a
// real Proxmox VE 9.1 server does: error messages in the HTTP reason phrase,
// 400 parameter errors with an "errors" map, 401/403/500/501/595 answers,
// upper-case UPIDs, tasks that run for a configurable number of status polls,
// HA-managed guests whose ha* task finishes before the guest changes state,
// and the type quirks of the real API (string loadavg, 0/1 booleans, LXC
// vmid as a string before PVE 8).
//
// Everything a test needs to assert on is exported: the request log
// ([Server.Requests], [Server.MutatingRequests]), the model ([Server.View],
// [Server.Guest]) and the tasks ([Server.Tasks]). Faults (latency, status,
// dropped connections, malformed, gigantic, endless or trickled bodies,
// HTML error pages, redirects) are injected with [Server.InjectFault];
// below HTTP, [Server.RotateCertificate] and [Server.StallHandshakes]
// change or stall the TLS handshake.
//
// Besides API tokens, [Cluster.Users] log in with a password the way the
// web UI does (POST /access/ticket): tickets expire after
// [Server.TicketLifetime], writes need the CSRFPreventionToken header,
// users with [User.SecondFactor] only get a half-authenticated ticket, and
// [Server.RevokeTickets] forces the next request to 401.
//
// The token secret [DefaultTokenSecret] is a fake, well-known value; never
// use it for a real server.
package proxmoxtest
