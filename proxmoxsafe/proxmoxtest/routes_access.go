package proxmoxtest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// Ticket authentication, as pve-access-control (API2/AccessControl.pm
// create_ticket, AccessControl.pm verify_ticket) and pve-common
// (Ticket.pm) implement it:
//   - POST /access/ticket with username (+ realm) and password answers
//     {username, ticket, CSRFPreventionToken, cap, clustername?}; the
//     password may be a valid ticket of the same user (renewal); any
//     failure is 401 "authentication failure" with {"data":null}.
//   - A ticket is "PVE:<userid>:<8 hex timestamp>::<base64 signature>",
//     valid from 5 minutes before to TicketLifetime (2 h) after its
//     timestamp; a user with a second factor gets a half-authenticated
//     "PVE:!tfa!<challenge>:…" ticket and NeedTFA 1 instead, which opens
//     nothing.
//   - Requests send it as the PVEAuthCookie cookie; every method but GET
//     also needs the CSRFPreventionToken header ("<8 hex>:<base64 HMAC>"),
//     else 401 "Permission denied - invalid csrf token".
//
// Signatures here are HMAC-SHA256 (real PVE signs with RSA); the shapes and
// the rules are the same.

// DefaultTicketLifetime is how long real Proxmox VE accepts a ticket, and
// the lifetime a [Server] uses when TicketLifetime is zero.
const DefaultTicketLifetime = 2 * time.Hour

// ticketGrace is $auth_graceperiod: tickets from up to 5 minutes in the
// future (clock skew between nodes) are accepted.
const ticketGrace = 5 * time.Minute

// User is a Proxmox VE user that logs in with a password (ticket
// authentication).
type User struct {
	Password string
	// SecondFactor models an account with TOTP (or any second factor)
	// configured: the right password only gets a half-authenticated
	// ticket with NeedTFA 1.
	SecondFactor bool
	// Disabled users are refused like a wrong password.
	Disabled bool
	// Privileges maps an ACL path to privilege names, like
	// [Token.Privileges].
	Privileges map[string][]string
}

// AddUser adds or replaces a user (id "name@realm").
func (s *Server) AddUser(id string, u *User) {
	s.Update(func(c *Cluster) {
		if c.Users == nil {
			c.Users = map[string]*User{}
		}
		c.Users[id] = u
	})
}

// RevokeTickets makes every ticket and CSRF token issued so far invalid, as
// replacing the cluster's auth key does: the next request with one gets
// 401 and the client has to log in again. It forces a 401 once for a
// client that re-authenticates.
func (s *Server) RevokeTickets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ticketKey = newKey()
}

// Logins returns how many POST /access/ticket requests were answered with
// a full ticket, renewals included.
func (s *Server) Logins() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.logins
}

func newKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

func (s *Server) ticketLifetime() time.Duration {
	if s.TicketLifetime > 0 {
		return s.TicketLifetime
	}
	return DefaultTicketLifetime
}

// sign is the ticket signature: 256 bytes, the size of PVE's RSA-2048 one.
func (s *Server) sign(plain string) string {
	var sig []byte
	for i := byte(0); len(sig) < 256; i++ {
		m := hmac.New(sha256.New, s.ticketKey)
		m.Write([]byte{i})
		m.Write([]byte(plain))
		sig = m.Sum(sig)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// mintTicket is assemble_rsa_ticket: uri_escape($data, ':') escapes
// only the colons of data.
func (s *Server) mintTicket(data string, now time.Time) string {
	plain := "PVE:" + strings.ReplaceAll(data, ":", "%3A") + ":" + fmt.Sprintf("%08X", now.Unix())
	return plain + "::" + s.sign(plain)
}

var ticketRE = lazyre.New(`^PVE:([^:]+):([0-9A-F]{8})::(.+)$`)

// verifyTicket returns the ticket's user id (or "!tfa!…" data of a
// half-authenticated ticket) when the signature is ours and the ticket is
// within its lifetime.
func (s *Server) verifyTicket(ticket string, now time.Time) (string, bool) {
	m := ticketRE.FindStringSubmatch(ticket)
	if m == nil {
		return "", false
	}
	plain := strings.TrimSuffix(ticket, "::"+m[3])
	if subtle.ConstantTimeCompare([]byte(s.sign(plain)), []byte(m[3])) != 1 {
		return "", false
	}
	ts, _ := strconv.ParseInt(m[2], 16, 64)
	age := now.Sub(time.Unix(ts, 0))
	if age < -ticketGrace || age >= s.ticketLifetime() {
		return "", false
	}
	data, err := url.PathUnescape(m[1])
	if err != nil {
		return "", false
	}
	return data, true
}

// csrfToken is assemble_csrf_prevention_token: "<8 hex>:" + HMAC-SHA256
// base64 without padding (Digest::SHA's form).
func (s *Server) csrfToken(user string, ts int64) string {
	stamp := fmt.Sprintf("%08X", ts)
	m := hmac.New(sha256.New, s.ticketKey)
	m.Write([]byte("csrf:" + stamp + ":" + user))
	return stamp + ":" + base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) verifyCSRF(user, token string, now time.Time) bool {
	stamp, _, ok := strings.Cut(token, ":")
	ts, err := strconv.ParseInt(stamp, 16, 64)
	if !ok || err != nil || len(stamp) != 8 {
		return false
	}
	age := now.Sub(time.Unix(ts, 0))
	if age < -ticketGrace || age >= s.ticketLifetime() {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(s.csrfToken(user, ts)), []byte(token)) == 1
}

// authFailed is the 401 of a bad ticket or CSRF token: the raw error up to
// pve-manager 9.1.4, one generic text from 9.1.5 (commit 26c10a2e).
func (s *Server) authFailed(raw string) *apiError {
	if s.cluster.versionAtLeast(9, 1, 5) {
		raw = "Authentication failed!"
	}
	return &apiError{status: http.StatusUnauthorized, message: raw}
}

// authCookieRE is extract_auth_value for a ticket sent in the
// Authorization header instead of a cookie.
var authCookieRE = lazyre.New(`(?:^|\s)PVEAuthCookie(?:=| )([^;]*)`)

// ticketFrom returns the request's ticket: the PVEAuthCookie cookie first,
// then "Authorization: PVEAuthCookie=…" (pve-http-server's order).
func ticketFrom(r *http.Request) (string, bool) {
	raw := ""
	if c, err := r.Cookie("PVEAuthCookie"); err == nil {
		raw = c.Value
	} else if m := authCookieRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		raw = m[1]
	} else {
		return "", false
	}
	if v, err := url.QueryUnescape(raw); err == nil {
		raw = v
	}
	return raw, true
}

// authenticateTicket checks a ticket, and the CSRF token on every method
// but GET (pve-manager HTTPServer.pm auth_handler). s.mu must be held.
func (s *Server) authenticateTicket(r *http.Request, ticket string) (string, *Token, *apiError) {
	now := s.ticketNow()
	user, ok := s.verifyTicket(ticket, now)
	u := s.cluster.Users[user]
	if !ok || strings.HasPrefix(user, "!tfa!") || u == nil || u.Disabled {
		return "", nil, s.authFailed("permission denied - invalid PVE ticket")
	}
	if r.Method != http.MethodGet && !s.verifyCSRF(user, r.Header.Get("CSRFPreventionToken"), now) {
		return "", nil, s.authFailed("Permission denied - invalid csrf token")
	}
	return user, &Token{Privileges: u.Privileges}, nil
}

// noAuthRoute reports the calls pveproxy serves without authentication.
func noAuthRoute(method, rel string) bool {
	return rel == "/access/ticket" && (method == http.MethodGet || method == http.MethodPost)
}

func accessRoutes() []*route {
	return []*route{
		{method: "GET", path: "/access/ticket", handle: func(*reqCtx) (any, *apiError) { return nil, nil }},
		{method: "POST", path: "/access/ticket", params: []param{
			{name: "username", typ: tString, maxLen: 64},
			{name: "password", typ: tString},
			{name: "realm", typ: tString, format: "pve-realm", maxLen: 32, optional: true},
			pStr("otp"), pStr("tfa-challenge"), pBool("new-format"),
			{name: "path", typ: tString, maxLen: 64, optional: true},
			{name: "privs", typ: tString, maxLen: 64, optional: true},
		}, handle: handleCreateTicket},
	}
}

// handleCreateTicket is create_ticket. s.mu is held for writing.
func handleCreateTicket(rc *reqCtx) (any, *apiError) {
	s, p := rc.s, rc.params
	// "requires": path and privs come together (JSONSchema.pm check_object).
	for _, pair := range [][2]string{{"path", "privs"}, {"privs", "path"}} {
		if _, ok := p[pair[0]]; ok {
			if _, ok := p[pair[1]]; !ok {
				return nil, paramErr(map[string]string{pair[1]: "missing property - '" + pair[0] + "' requires this property"})
			}
		}
	}
	username := p["username"]
	if realm := p["realm"]; realm != "" {
		username += "@" + realm
	}
	// Every failure is the same 401, "to prevent user enumeration attacks".
	fail := &apiError{status: http.StatusUnauthorized, message: "authentication failure"}
	u := s.cluster.Users[username]
	if u == nil || u.Disabled {
		return nil, fail
	}
	if _, ok := p["tfa-challenge"]; ok {
		return nil, fail // answering a second-factor challenge is not modelled
	}
	now := s.ticketNow()
	pw := p["password"]
	byTicket := false
	if tuser, ok := s.verifyTicket(pw, now); ok {
		if strings.HasPrefix(tuser, "!tfa!") || (tuser != username && tuser != "root@pam") {
			return nil, fail // "incomplete ticket", or someone else's
		}
		byTicket = true
	} else if subtle.ConstantTimeCompare([]byte(pw), []byte(u.Password)) != 1 {
		return nil, fail
	}
	if path, ok := p["path"]; ok {
		// verify_auth: credentials plus privileges, no new ticket.
		tok := &Token{Privileges: u.Privileges}
		for _, priv := range strings.FieldsFunc(p["privs"], func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
			if !hasPriv(tok, path, priv) {
				return nil, fail
			}
		}
		return map[string]any{"username": username}, nil
	}
	if u.SecondFactor && !byTicket {
		return map[string]any{
			"username":            username,
			"ticket":              s.mintTicket(`!tfa!{"totp":true}`, now),
			"CSRFPreventionToken": s.csrfToken(username, now.Unix()),
			"NeedTFA":             1,
		}, nil
	}
	s.logins++
	out := map[string]any{
		"username":            username,
		"ticket":              s.mintTicket(username, now),
		"CSRFPreventionToken": s.csrfToken(username, now.Unix()),
		"cap":                 capabilities(u),
	}
	if s.cluster.Name != "" && hasPriv(&Token{Privileges: u.Privileges}, "/", "Sys.Audit") {
		out["clustername"] = s.cluster.Name
	}
	return out, nil
}

// capGroups is compute_api_permission: per GUI area, the privileges that
// matter there, collected from every ACL path at or below the area's path.
var capGroups = []struct {
	name, path string
	re         *lazyre.Regexp
}{
	{"vms", "/vms", lazyre.New(`^(VM\.|Permissions\.Modify$)`)},
	{"access", "/access", lazyre.New(`^((User|Group)\.|Permissions\.Modify$)`)},
	{"storage", "/storage", lazyre.New(`^(Datastore\.|Permissions\.Modify$)`)},
	{"nodes", "/nodes", lazyre.New(`^(Sys\.|Permissions\.Modify$)`)},
	{"sdn", "/sdn", lazyre.New(`^(SDN\.|Permissions\.Modify$)`)},
	{"mapping", "/mapping", lazyre.New(`^(Mapping\.|Permissions\.Modify$)`)},
	{"dc", "/", lazyre.New(`^(Sys\.Audit$|SDN\.)`)},
}

func capabilities(u *User) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, g := range capGroups {
		set := map[string]int{}
		for path, privs := range u.Privileges {
			if path != "/" && path != g.path && !strings.HasPrefix(path, g.path+"/") {
				continue
			}
			for _, priv := range privs {
				if g.re.MatchString(priv) {
					set[priv] = 1
				}
			}
		}
		out[g.name] = set
	}
	return out
}

// ticketNow is the time tickets are issued and checked at.
func (s *Server) ticketNow() time.Time {
	if s.TicketClock != nil {
		return s.TicketClock()
	}
	return time.Now()
}
