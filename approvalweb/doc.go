// Package approvalweb serves the approval page: a small, script-free web
// page where the operator approves or denies the pending out-of-band grants
// of a [grant.Store] (the "grant" approval level), from a
// browser instead of the server host's terminal.
//
// The page is a channel the model cannot reach: it has its own operator
// login, a secret that must differ from the MCP bearer token and the
// Proxmox credentials ([New] refuses otherwise), so holding what an MCP
// client holds opens nothing here. A decision made on the page is the
// same as the CLI's "proxmox-safe-mcp approve CODE": [grant.Store.Decide]
// on a pending, unexpired grant, bound to its action, target, parameters
// and state fingerprint, used at most once, with the operator's name
// recorded in the grant and, when the call uses it, in the audit record.
//
// What a browser gets:
//
//   - a login form; a session cookie (HttpOnly, SameSite=Strict, Secure on
//     TLS or with [Options.SecureCookie], path limited to the page) that
//     lasts [Options.SessionTTL] at most; failed logins are rate-limited
//     for everyone ([MaxFailedLogins] a minute) and the secret is compared
//     in constant time;
//   - the list of pending grants with their plan (action, target,
//     parameters, current state, effect, the Proxmox request, risk,
//     expiry), and one page per grant with approve and deny forms.
//     Approving needs the guest's VMID typed in, or for a request that
//     names no guest (an API gateway write to a node or the cluster) its
//     method and path, e.g. "DELETE /cluster/ha/groups/web", as the
//     elicitation form asks ([proxmoxsafe.ConfirmWord]): a person must
//     read the target to approve it;
//   - every state-changing form (approve, deny, log out) carries a
//     per-session CSRF token that is checked in constant time, and every
//     POST passes [http.CrossOriginProtection] (Origin and Sec-Fetch-Site
//     must be this page's own origin);
//   - on every answer: Content-Security-Policy "default-src 'none'" with
//     only the page's one inline stylesheet allowed (by hash), form-action
//     'self', frame-ancestors 'none', base-uri 'none'; X-Frame-Options
//     DENY; Referrer-Policy no-referrer; Cache-Control no-store;
//     X-Content-Type-Options nosniff. The page has no script at all, and
//     everything shown is escaped by html/template.
//
// The handler does not check the Host header: mount it behind one that
// does, such as the Pages option of package mcphttp, which applies the MCP
// endpoint's Host allowlist to the page and removes the Authorization
// header before the page sees the request.
package approvalweb
