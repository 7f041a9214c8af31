package approvalweb

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// Defaults and bounds of [Options].
const (
	// DefaultPath is where the page is served.
	DefaultPath = "/approve/"
	// MinSecretLength is the shortest operator secret [New] accepts.
	MinSecretLength = 16
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 15 * time.Minute
	// MaxSessionTTL is the longest login [Options.SessionTTL] may ask for.
	MaxSessionTTL = time.Hour
	// DefaultOperator is the name recorded for decisions made on the page
	// when [Options.Operator] is empty.
	DefaultOperator = "operator"
	// OperatorPrefix starts the operator name recorded in a grant decided
	// on the page, so the audit log tells page decisions from the CLI's
	// (which record the login name).
	OperatorPrefix = "approval-page:"
)

// Options configures [New]. Secret is required; the zero value of every
// other field is documented with it.
type Options struct {
	// Secret is the operator's login secret (a password or a token), at
	// least [MinSecretLength] characters. It must differ from every entry
	// of OtherSecrets.
	Secret string
	// OtherSecrets are secrets the operator secret must not equal: the
	// MCP bearer token (its holder must not be able to approve) and the
	// Proxmox credentials. Empty entries are ignored.
	OtherSecrets []string
	// Operator is the name recorded for decisions (letters, digits and
	// ._@-, up to 64 characters), as OperatorPrefix + Operator. "" means
	// [DefaultOperator].
	Operator string
	// Path is the URL path prefix the page is served under; it must start
	// and end with "/". "" means [DefaultPath].
	Path string
	// SessionTTL is how long a login lasts (then the operator logs in
	// again). 0 means [DefaultSessionTTL]; at most [MaxSessionTTL].
	SessionTTL time.Duration
	// SecureCookie marks the session cookie Secure even when the request
	// did not arrive over TLS: set it behind a proxy that terminates TLS.
	// Requests that arrive over TLS always get a Secure cookie.
	SecureCookie bool
	// TrustedOrigins are extra origins (scheme://host[:port]) whose form
	// posts are accepted, for a proxy that changes the Host header. By
	// default only the origin naming the request's own Host is.
	TrustedOrigins []string
	// Logger gets one line per login, decision and refused request (never
	// a secret, cookie or CSRF token). nil discards.
	Logger *slog.Logger
}

// Handler serves the approval page; see the package documentation.
type Handler struct {
	store    *grant.Store
	path     string
	secret   [sha256.Size]byte
	operator string
	ttl      time.Duration
	secure   bool
	cop      *http.CrossOriginProtection
	log      *slog.Logger
	now      func() time.Time

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]*session
	failures []time.Time // failed logins in the last minute
}

var operatorRE = lazyre.New(`^[A-Za-z0-9._@-]{1,64}$`)

// New returns the approval page for store; opts must set Secret. It
// reports bad options (a short secret, one equal to an OtherSecrets
// entry, a bad path, name or origin) as errors.
func New(store *grant.Store, opts *Options) (*Handler, error) {
	if store == nil {
		return nil, errors.New("approvalweb: no grant store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Secret == "":
		return nil, errors.New("approvalweb: the operator secret is empty")
	case len(o.Secret) < MinSecretLength:
		return nil, fmt.Errorf("approvalweb: the operator secret is shorter than %d characters", MinSecretLength)
	}
	for _, other := range o.OtherSecrets {
		if other != "" && other == o.Secret {
			return nil, errors.New("approvalweb: the operator secret must differ from the MCP bearer token and the Proxmox credentials: whoever holds those must not be able to approve")
		}
	}
	if o.Operator == "" {
		o.Operator = DefaultOperator
	}
	if !operatorRE.MatchString(o.Operator) {
		return nil, fmt.Errorf("approvalweb: operator name %q must be 1 to 64 letters, digits or ._@-", o.Operator)
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if !strings.HasPrefix(o.Path, "/") || !strings.HasSuffix(o.Path, "/") || strings.ContainsAny(o.Path, "?#%* ") || strings.Contains(o.Path, "//") {
		return nil, fmt.Errorf("approvalweb: Path %q must be a URL path that starts and ends with /, such as /approve/", o.Path)
	}
	switch {
	case o.SessionTTL == 0:
		o.SessionTTL = DefaultSessionTTL
	case o.SessionTTL < time.Minute || o.SessionTTL > MaxSessionTTL:
		return nil, fmt.Errorf("approvalweb: SessionTTL %s is out of range (1m to %s)", o.SessionTTL, MaxSessionTTL)
	}
	cop := http.NewCrossOriginProtection()
	for _, origin := range o.TrustedOrigins {
		if err := cop.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("approvalweb: trusted origin: %w", err)
		}
	}
	h := &Handler{
		store:    store,
		path:     o.Path,
		secret:   sha256.Sum256([]byte(o.Secret)),
		operator: OperatorPrefix + o.Operator,
		ttl:      o.SessionTTL,
		secure:   o.SecureCookie,
		cop:      cop,
		log:      o.Logger,
		now:      time.Now,
		sessions: map[[sha256.Size]byte]*session{},
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

// Path is the URL path prefix the page is served under.
func (h *Handler) Path() string { return h.path }

// ServeHTTP routes the page's requests: GET Path (the list, or the login
// form), POST Path+"login", POST Path+"logout", GET and POST
// Path+"grant/CODE".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	rest, ok := strings.CutPrefix(r.URL.Path, h.path)
	if !ok {
		if r.URL.Path+"/" == h.path {
			http.Redirect(w, r, h.path, http.StatusSeeOther)
			return
		}
		h.fail(w, r, http.StatusNotFound, "no such page", nil)
		return
	}
	switch {
	case rest == "":
		h.route(w, r, h.serveIndex, nil)
	case rest == "login":
		h.route(w, r, nil, h.serveLogin)
	case rest == "logout":
		h.route(w, r, nil, h.serveLogout)
	case strings.HasPrefix(rest, "grant/") && !strings.Contains(rest[len("grant/"):], "/"):
		code := rest[len("grant/"):]
		h.route(w, r, func(w http.ResponseWriter, r *http.Request) { h.serveGrant(w, r, code) },
			func(w http.ResponseWriter, r *http.Request) { h.serveDecide(w, r, code) })
	default:
		h.fail(w, r, http.StatusNotFound, "no such page", nil)
	}
}

// maxFormBytes bounds a form body: the largest form holds a CSRF token,
// a decision and a confirmation word (a VMID, or a method and a path of
// up to MaxGatewayPathLen bytes).
const maxFormBytes = 4 << 10

// route dispatches on the method. A POST must pass the cross-origin check
// (Origin and Sec-Fetch-Site name this page's origin) before anything
// else, and its body is bounded.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, get, post http.HandlerFunc) {
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && get != nil:
		get(w, r)
	case r.Method == http.MethodPost && post != nil:
		if err := h.cop.Check(r); err != nil {
			h.fail(w, r, http.StatusForbidden, "cross-origin request refused: forms are accepted only from this page's own origin", nil)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			h.fail(w, r, http.StatusBadRequest, "the form could not be read", nil)
			return
		}
		post(w, r)
	default:
		allow := "POST"
		if get != nil {
			allow = "GET, HEAD"
			if post != nil {
				allow += ", POST"
			}
		}
		w.Header().Set("Allow", allow)
		h.fail(w, r, http.StatusMethodNotAllowed, "method not allowed", nil)
	}
}

// fail logs a refused request and answers with the error page. s is the
// caller's session, if any (the page then keeps its logout button).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, reason string, s *session) {
	level := slog.LevelInfo
	if status == http.StatusForbidden || status == http.StatusUnauthorized || status == http.StatusTooManyRequests {
		level = slog.LevelWarn
	}
	h.log.Log(r.Context(), level, "approval page refused a request", slog.String("reason", reason), slog.Int("status", status),
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr))
	h.render(w, status, "error", pageData{Title: http.StatusText(status), Message: reason, Session: s})
}
