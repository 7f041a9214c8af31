package proxmoxtest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// authHeaderRE is extract_auth_value from pve-http-server Formatter.pm:
// "PVEAPIToken=" or "PVEAPIToken " followed by the (URI-escaped) value.
var authHeaderRE = lazyre.New(`(?:^|\s)PVEAPIToken(?:=| )([^;]*)`)

// authenticate returns the token id (or the user id of a ticket) and the
// privileges for the request, or the 401 PVE would send. s.mu must be held
// (read).
func (s *Server) authenticate(r *http.Request) (string, *Token, *apiError) {
	// A ticket wins over a token (pve-http-server extract order).
	if ticket, ok := ticketFrom(r); ok {
		return s.authenticateTicket(r, ticket)
	}
	m := authHeaderRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return "", nil, &apiError{status: http.StatusUnauthorized, message: "No ticket"}
	}
	value, err := url.QueryUnescape(m[1])
	if err != nil {
		value = m[1]
	}
	// verify_token splits at the LAST '=': /^(.*)=(.*)$/.
	i := strings.LastIndexByte(value, '=')
	if i >= 0 {
		id, secret := value[:i], value[i+1:]
		if tok := s.cluster.Tokens[id]; tok != nil && tok.Secret == secret {
			return id, tok, nil
		}
	}
	msg := "invalid token value!"
	if s.cluster.versionAtLeast(9, 1, 5) {
		// pve-manager 26c10a2e (9.1.5): one generic message for every failure.
		msg = "Authentication failed!"
	}
	return "", nil, &apiError{status: http.StatusUnauthorized, message: msg}
}

// hasPriv reports whether tok holds priv on path or on any ancestor of it
// (ACL propagation).
func hasPriv(tok *Token, path, priv string) bool {
	for p := path; ; p = parentPath(p) {
		if slices.Contains(tok.Privileges[p], priv) {
			return true
		}
		if p == "/" {
			return false
		}
	}
}

// parentPath is the ACL parent: "/vms/101" -> "/vms" -> "/".
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// effectivePrivs is the set of privileges tok holds on path, inherited ones
// included.
func effectivePrivs(tok *Token, path string) map[string]int {
	out := map[string]int{}
	for p := path; ; p = parentPath(p) {
		for _, priv := range tok.Privileges[p] {
			out[priv] = 1
		}
		if p == "/" {
			return out
		}
	}
}

// permSpec is a schema "check": ["perm", path, [privs]]; every privilege is
// required and the first missing one is reported, as RPCEnvironment check does.
type permSpec struct {
	path  string // may contain {node} / {vmid} / {storage}
	privs []string
	// any: one of privs suffices (the schema's "any", 1); the 403 names
	// them all joined by "|", as check_any does.
	any bool
}

func (ps *permSpec) check(rc *reqCtx) *apiError {
	if ps == nil {
		return nil
	}
	path := ps.path
	for k, v := range rc.uri {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	if ps.any {
		for _, priv := range ps.privs {
			if hasPriv(rc.token, path, priv) {
				return nil
			}
		}
		return permErr(path, strings.Join(ps.privs, "|"))
	}
	for _, priv := range ps.privs {
		if !hasPriv(rc.token, path, priv) {
			return permErr(path, priv)
		}
	}
	return nil
}

// handleAccessPermissions is GET /access/permissions without userid: the
// caller's effective privileges, per ACL path (or for the one path asked).
func handleAccessPermissions(rc *reqCtx) (any, *apiError) {
	if uid, ok := rc.params["userid"]; ok && uid != rc.tokenID {
		// Other users need Sys.Audit on /access (schema description).
		if !hasPriv(rc.token, "/access", "Sys.Audit") {
			return nil, permErr("/access", "Sys.Audit")
		}
		if rc.s.cluster.Tokens[uid] == nil {
			return map[string]any{}, nil
		}
		return permissionMap(rc.s.cluster.Tokens[uid], rc.params["path"]), nil
	}
	return permissionMap(rc.token, rc.params["path"]), nil
}

func permissionMap(tok *Token, path string) map[string]map[string]int {
	out := map[string]map[string]int{}
	if path != "" {
		out[path] = effectivePrivs(tok, path)
		return out
	}
	for p := range tok.Privileges {
		out[p] = effectivePrivs(tok, p)
	}
	return out
}
