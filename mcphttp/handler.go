package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// Defaults used when the corresponding [Options] field is zero.
const (
	// DefaultPath is where MCP is served.
	DefaultPath = "/mcp"
	// DefaultSessionTimeout closes a stateful session after this long
	// without a request. Clients that go away without DELETE would otherwise
	// keep their session (and its goroutines) for the life of the process.
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxRequestBodyBytes matches go-sdk's default: far more than any
	// tool call of this server needs, small enough to bound memory.
	DefaultMaxRequestBodyBytes = mcp.DefaultMaxRequestBodyBytes
)

// HealthPath answers GET and HEAD with 200 "ok" while the handler serves,
// and 503 once [Handler.Shutdown] has begun. It needs no authentication and
// says nothing else, so it is safe to expose to a supervisor.
const HealthPath = "/healthz"

// wellKnownPRM is the RFC 9728 metadata location; the resource path is
// appended to it (RFC 9728 §3.1).
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// Options configures [New]. A nil *Options is the zero value: MCP on
// [DefaultPath], no authentication (so only loopback connections are
// served), no allowed Origin, Host limited to the address the connection
// arrived on, stateful sessions closed after [DefaultSessionTimeout] idle.
type Options struct {
	// Path is where MCP is served; "" means [DefaultPath]. It must start
	// with "/" and must not be [HealthPath] or under /.well-known/.
	Path string

	// TokenVerifier checks the bearer token of every MCP request (see
	// [StaticTokenVerifier] for a fixed shared secret). Set
	// [auth.TokenInfo.UserID] in what it returns: go-sdk binds each session
	// to that identity. nil means no authentication; then only connections
	// that arrive on a loopback address are served (403 otherwise), unless
	// AllowUnauthenticatedRemote is set.
	TokenVerifier auth.TokenVerifier
	// Bearer is passed to [auth.RequireBearerToken] (required scopes,
	// AllowMissingExpiration, ClockSkew); nil means none. Its
	// ResourceMetadataURL is filled in from ResourceMetadata when empty.
	Bearer *auth.RequireBearerTokenOptions
	// AllowUnauthenticatedRemote serves non-loopback connections without a
	// TokenVerifier. Only for deployments where a proxy in front
	// authenticates every request; the Origin and Host checks still apply.
	AllowUnauthenticatedRemote bool

	// AllowedOrigins are the exact origins (scheme://host[:port]) that may
	// send requests from a browser. A request with any other Origin header,
	// including "null", is refused with 403. Requests without an Origin
	// header (non-browser clients) are not affected. Empty allows none.
	AllowedOrigins []string
	// AllowedHosts are extra Host header values accepted besides the
	// address the connection arrived on (IP and port) and, on a loopback
	// address, "localhost" with that port. An entry without a port matches
	// any port. Needed behind a reverse proxy or a container port mapping,
	// which change the Host the client used. Empty allows only the above.
	AllowedHosts []string

	// ResourceMetadata, when set, is served as RFC 9728 protected resource
	// metadata at /.well-known/oauth-protected-resource and at that path
	// followed by Path, and its URL is announced in WWW-Authenticate on 401.
	// Resource (the canonical https URL of the MCP endpoint) and at least
	// one AuthorizationServers entry are required, and so is a
	// TokenVerifier: metadata that points to an authorization server whose
	// tokens nothing checks would be a lie.
	ResourceMetadata *oauthex.ProtectedResourceMetadata

	// LegacySSE serves the deprecated HTTP+SSE transport of protocol
	// 2024-11-05 instead of streamable HTTP, for clients that have not
	// moved on: GET Path opens a session's event stream, whose first event
	// names the URL to POST its messages to. Every check above applies
	// alike, sessions are bound to the identity that opened them and count
	// against MaxSessionsPerIdentity; a session ends when its stream does
	// (SessionTimeout does not apply). Path defaults to [DefaultSSEPath].
	// Not together with Stateless.
	LegacySSE bool

	// Stateless serves every POST with a temporary session: no
	// Mcp-Session-Id, GET and DELETE answer 405, and the server cannot send
	// requests to the client. The default (false) keeps sessions, which
	// server-to-client requests such as elicitation need.
	Stateless bool
	// SessionTimeout closes a stateful session after this long without a
	// request. 0 means [DefaultSessionTimeout]; negative means never.
	SessionTimeout time.Duration
	// MaxRequestBodyBytes bounds a request body (413 beyond it). 0 means
	// [DefaultMaxRequestBodyBytes]; negative is an error, since an
	// unbounded body is a memory exhaustion waiting to happen.
	MaxRequestBodyBytes int64
	// BodyReadTimeout is how long a client may take to send a request
	// body once its headers are in (408 and the connection closed after
	// it). 0 means [DefaultBodyReadTimeout]; negative is an error. The
	// headers' own deadline belongs to [http.Server.ReadHeaderTimeout];
	// do not set http.Server.ReadTimeout, which would also cut event
	// streams and long tool calls.
	BodyReadTimeout time.Duration
	// MaxSessionsPerIdentity caps the stateful sessions one identity
	// ([auth.TokenInfo.UserID]; all unauthenticated clients count as one)
	// may hold open; a request that would open one more gets 429. 0 means
	// [DefaultMaxSessionsPerIdentity]; negative means no cap.
	MaxSessionsPerIdentity int
	// MaxInFlight bounds the authenticated requests served at once (event
	// streams excluded); beyond it requests get 503 with Retry-After.
	// 0 means [DefaultMaxInFlight]; negative means no bound.
	MaxInFlight int

	// Pages, when set, serves browser pages under PagesPath on the same
	// listener, such as the operator's approval page (package
	// approvalweb). They get the Host check of the MCP endpoint (a DNS
	// rebinding page cannot reach them) and no bearer-token check: pages
	// authenticate their own users, and the Authorization header is
	// removed before they see the request, so the MCP token can never
	// open them. Their Origin checks are their own: a page must accept
	// form posts from its own origin, which the MCP endpoint refuses.
	// Pages share the MCP endpoint's origin, which the endpoint accepts
	// from a browser on loopback: mount only pages that run no script.
	Pages http.Handler
	// PagesPath is the URL path prefix Pages is served under: it must
	// start and end with "/" and must not overlap Path, HealthPath or
	// /.well-known/. Required with Pages.
	PagesPath string

	// Logger gets one line per refused request (reason, method, path,
	// remote address, and the offending Origin or Host; never a header
	// carrying credentials) and go-sdk's transport errors. nil discards.
	Logger *slog.Logger
}

// Handler is the http.Handler returned by [New].
type Handler struct {
	server      *mcp.Server
	path        string
	metaPath    string // wellKnownPRM + path, "" without metadata
	mcp         http.Handler
	health      http.Handler
	meta        http.Handler
	origin      *originCheck
	maxBody     int64
	bodyTimeout time.Duration
	slots       chan struct{} // in-flight bound; nil = none
	sessions    *sessions
	stateful    bool
	sse         *sseHandler // LegacySSE; nil otherwise
	cancels     callCancels // stateful streamable HTTP: calls a client may cancel
	pages       http.Handler
	pagesPath   string
	log         *slog.Logger

	mu       sync.Mutex
	closing  bool
	inflight int
	drained  chan struct{} // closed when closing and inflight == 0
}

// New returns a handler serving server over streamable HTTP (or, with
// [Options.LegacySSE], the legacy HTTP+SSE transport) with the checks
// described in the package documentation. opts may be nil. New reports
// invalid options (a malformed origin or host, a bad path, incomplete
// metadata) as an error; it panics if server is nil, a programmer error.
func New(server *mcp.Server, opts *Options) (*Handler, error) {
	if server == nil {
		panic("mcphttp.New: nil server")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	h := &Handler{
		server:      server,
		path:        o.Path,
		maxBody:     o.MaxRequestBodyBytes,
		bodyTimeout: o.BodyReadTimeout,
		stateful:    !o.Stateless,
		log:         o.Logger,
		drained:     make(chan struct{}),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if o.LegacySSE && o.Stateless {
		return nil, errors.New("mcphttp: LegacySSE cannot be Stateless: the legacy transport keeps a session per event stream")
	}
	if h.path == "" {
		h.path = DefaultPath
		if o.LegacySSE {
			h.path = DefaultSSEPath
		}
	}
	if err := checkPath(h.path); err != nil {
		return nil, err
	}
	if o.Pages != nil || o.PagesPath != "" {
		if err := checkPagesPath(o.PagesPath, h.path); err != nil || o.Pages == nil {
			if err == nil {
				err = errors.New("mcphttp: PagesPath is set without Pages")
			}
			return nil, err
		}
		h.pages, h.pagesPath = o.Pages, o.PagesPath
	}
	switch {
	case h.maxBody == 0:
		h.maxBody = DefaultMaxRequestBodyBytes
	case h.maxBody < 0:
		return nil, errors.New("mcphttp: MaxRequestBodyBytes must not be negative")
	}
	switch {
	case h.bodyTimeout == 0:
		h.bodyTimeout = DefaultBodyReadTimeout
	case h.bodyTimeout < 0:
		return nil, errors.New("mcphttp: BodyReadTimeout must not be negative")
	}
	maxSessions := o.MaxSessionsPerIdentity
	if maxSessions == 0 {
		maxSessions = DefaultMaxSessionsPerIdentity
	}
	h.sessions = newSessions(server, maxSessions, !o.LegacySSE)
	switch n := o.MaxInFlight; {
	case n == 0:
		h.slots = make(chan struct{}, DefaultMaxInFlight)
	case n > 0:
		h.slots = make(chan struct{}, n)
	}
	timeout := o.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0 // go-sdk: never
	}
	g, err := newOriginCheck(o.AllowedOrigins, o.AllowedHosts)
	if err != nil {
		return nil, err
	}
	h.origin = g

	var bearer auth.RequireBearerTokenOptions
	if o.Bearer != nil {
		bearer = *o.Bearer
	}
	if o.ResourceMetadata != nil {
		if o.TokenVerifier == nil {
			return nil, errors.New("mcphttp: ResourceMetadata needs a TokenVerifier")
		}
		metaURL, err := checkMetadata(o.ResourceMetadata)
		if err != nil {
			return nil, err
		}
		if bearer.ResourceMetadataURL == "" {
			bearer.ResourceMetadataURL = metaURL
		}
		md := *o.ResourceMetadata
		h.meta = auth.ProtectedResourceMetadataHandler(&md)
		h.metaPath = wellKnownPRM + h.path
	}

	// Outermost last: origin check → authentication → body → in-flight bound →
	// session cap → JSON-RPC fixes → go-sdk.
	var inner http.Handler
	if o.LegacySSE {
		h.sse = newSSEHandler(h) // caps its sessions itself, on GET
		inner = h.sse
	} else {
		inner = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
			Stateless:           o.Stateless,
			SessionTimeout:      timeout,
			MaxRequestBodyBytes: h.maxBody,
			Logger:              o.Logger,
			// The origin check tests Host on every connection, loopback or not;
			// go-sdk's own check would also refuse the AllowedHosts.
			DisableLocalhostProtection: true,
		})
		if h.stateful {
			inner = h.honourCancel(inner)
		}
		inner = h.methodNotFound(inner)
		if h.stateful {
			inner = h.refuseDiscover(inner)
			inner = h.limitSessions(inner)
		}
	}
	// The in-flight bound counts requests whose body is in: a client
	// trickling bodies must not hold the slots others need (the body
	// deadline bounds those connections instead).
	inner = h.limitInFlight(inner)
	inner = h.readBody(inner)
	if o.TokenVerifier != nil {
		inner = h.requireToken(o.TokenVerifier, &bearer, inner)
	} else if !o.AllowUnauthenticatedRemote {
		inner = h.loopbackOnly(inner)
	}
	h.mcp = h.origin.wrap(h, inner)
	h.health = http.HandlerFunc(h.serveHealth)
	return h, nil
}

// ServeHTTP routes MCP, health and metadata requests; anything else is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case h.path:
		// A GET is a session's event stream: it never ends by itself, so it
		// is not waited for, and it is let through while draining, since a
		// client whose stream breaks may give up on the calls in flight.
		// Closing the sessions ends these streams.
		if r.Method != http.MethodGet {
			if !h.enter() {
				writeError(w, http.StatusServiceUnavailable, "server is shutting down")
				return
			}
			defer h.exit()
		}
		h.bodyDeadline(w, r)
		h.mcp.ServeHTTP(w, r)
	case HealthPath:
		h.health.ServeHTTP(w, r)
	case wellKnownPRM, h.metaPath:
		if h.meta == nil {
			http.NotFound(w, r)
			return
		}
		// Public by design (RFC 9728 allows any origin), but a rebinding
		// Host still has no business here.
		if !h.origin.hostAllowed(r) {
			h.reject(w, r, http.StatusForbidden, "host not allowed", slog.String("host", r.Host))
			return
		}
		h.meta.ServeHTTP(w, r)
	default:
		if h.pages != nil && (strings.HasPrefix(r.URL.Path, h.pagesPath) || r.URL.Path+"/" == h.pagesPath) {
			h.servePages(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

// servePages serves Options.Pages behind the Host check, without the
// Authorization header, and not while shutting down.
func (h *Handler) servePages(w http.ResponseWriter, r *http.Request) {
	if !h.origin.hostAllowed(r) {
		h.reject(w, r, http.StatusForbidden, "host not allowed", slog.String("host", r.Host))
		return
	}
	if !h.enter() {
		http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer h.exit()
	h.pages.ServeHTTP(w, withoutCredentials(r))
}

// serveHealth answers liveness probes. It runs before every check on
// purpose: supervisors use whatever Host they like, and the answer carries
// no information beyond "the process serves".
func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "shutting down")
		return
	}
	fmt.Fprint(w, "ok")
}

// requireToken is go-sdk's bearer middleware plus two things it lacks: a
// WWW-Authenticate challenge even when no metadata URL or scope is
// configured (RFC 6750 §3 requires one on 401), and removal of the
// Authorization header once verified, so the client's token cannot travel
// further than this function.
func (h *Handler) requireToken(v auth.TokenVerifier, opts *auth.RequireBearerTokenOptions, next http.Handler) http.Handler {
	challenge := ""
	if opts.ResourceMetadataURL == "" && len(opts.Scopes) == 0 {
		challenge = `Bearer realm="mcp"`
	}
	verified := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if challenge != "" {
			w.Header().Del("WWW-Authenticate")
		}
		if rec, ok := w.(*statusRecorder); ok {
			rec.passed = true
		}
		next.ServeHTTP(w, withoutCredentials(r))
	})
	mw := auth.RequireBearerToken(v, opts)(verified)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if challenge != "" {
			w.Header().Set("WWW-Authenticate", challenge)
		}
		rec := &statusRecorder{ResponseWriter: w}
		mw.ServeHTTP(rec, r)
		if !rec.passed {
			h.log.Info("refused HTTP request", slog.String("reason", "authentication failed"),
				slog.Int("status", rec.status), slog.String("method", r.Method), slog.String("remote", r.RemoteAddr))
		}
	})
}

// loopbackOnly refuses connections that did not arrive on a loopback
// address, for a handler without authentication.
func (h *Handler) loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ip, _, ok := localAddr(r); !ok || !ip.IsLoopback() {
			h.reject(w, r, http.StatusForbidden, "unauthenticated access is limited to loopback connections")
			return
		}
		next.ServeHTTP(w, withoutCredentials(r))
	})
}

// withoutCredentials returns r without its Authorization header. A request
// may carry one even when nothing checks it (for example a Proxmox
// "PVEAPIToken=…" header sent by mistake); nothing downstream needs it.
func withoutCredentials(r *http.Request) *http.Request {
	if _, ok := r.Header["Authorization"]; !ok {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = r.Header.Clone()
	r2.Header.Del("Authorization")
	return r2
}

// reject logs and answers a refused request. The body is a JSON-RPC error
// without an id, which the spec allows for these answers and which clients
// surface as a readable message.
func (h *Handler) reject(w http.ResponseWriter, r *http.Request, status int, reason string, attrs ...slog.Attr) {
	args := []any{slog.String("reason", reason), slog.Int("status", status),
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr)}
	for _, a := range attrs {
		args = append(args, a)
	}
	level := slog.LevelInfo
	if status == http.StatusForbidden {
		level = slog.LevelWarn // a browser page or a rebinding attempt
	}
	h.log.Log(r.Context(), level, "refused HTTP request", args...)
	writeError(w, status, reason)
}

// writeError answers a refused request with status and an Invalid Request
// error with id null (the request's own id is not read for a refusal).
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(rpcerr.ErrorObject(nil, jsonrpc.CodeInvalidRequest, msg), '\n'))
}

// statusRecorder remembers the status the bearer middleware wrote, only to
// log refusals. passed is set when the token was accepted, so the inner
// handler's own answers are not logged as authentication failures. It
// implements Unwrap, so http.ResponseController (which go-sdk uses to flush
// event streams) still reaches the real writer.
type statusRecorder struct {
	http.ResponseWriter
	status int
	passed bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// enter registers a request unless the handler is shutting down.
func (h *Handler) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.inflight++
	return true
}

func (h *Handler) exit() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inflight--
	if h.closing && h.inflight == 0 {
		close(h.drained)
	}
}

// Shutdown makes the handler refuse new requests (503, and 503 on
// [HealthPath]), waits until the requests in flight have finished or ctx is
// done, then closes every session this handler created, which also ends
// their GET event streams. Call it alongside [http.Server.Shutdown], whose
// wait for idle connections would otherwise never end while a client holds
// an event stream open. It returns ctx.Err() if ctx ended first; sessions
// are closed in either case. Shutdown may be called more than once.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if !h.closing {
		h.closing = true
		if h.inflight == 0 {
			close(h.drained)
		}
	}
	h.mu.Unlock()
	var err error
	select {
	case <-h.drained:
	case <-ctx.Done():
		err = ctx.Err()
	}
	toClose := h.sessions.takeAll()
	if h.sse != nil {
		defer h.sse.closeAll()
	}
	// ServerSession.Close waits for the session's handlers; after a missed
	// deadline that may take long, so close in the background then.
	closeAll := func() {
		for _, ss := range toClose {
			_ = ss.Close()
		}
	}
	if err != nil {
		go closeAll()
	} else {
		closeAll()
	}
	return err
}

func checkPath(p string) error {
	u, err := url.Parse(p)
	switch {
	case err != nil || !strings.HasPrefix(p, "/") || u.Path != p || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("mcphttp: Path %q must be an absolute URL path such as /mcp", p)
	case p == HealthPath || p == "/.well-known" || strings.HasPrefix(p, "/.well-known/"):
		return fmt.Errorf("mcphttp: Path %q is reserved", p)
	}
	return nil
}

// checkPagesPath checks Options.PagesPath against the paths the handler
// serves itself.
func checkPagesPath(p, mcpPath string) error {
	u, err := url.Parse(p)
	switch {
	case err != nil || !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || p == "/" || u.Path != p || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("mcphttp: PagesPath %q must be a URL path that starts and ends with /, such as /approve/", p)
	case strings.HasPrefix(mcpPath+"/", p) || strings.HasPrefix(p, mcpPath+"/") || strings.HasPrefix(HealthPath+"/", p) || strings.HasPrefix(p, "/.well-known/"):
		return fmt.Errorf("mcphttp: PagesPath %q overlaps the MCP path, %s or /.well-known/", p, HealthPath)
	}
	return nil
}

// checkMetadata validates md and returns its metadata URL: the well-known
// prefix inserted between the resource's host and path (RFC 9728 §3.1).
func checkMetadata(md *oauthex.ProtectedResourceMetadata) (string, error) {
	u, err := url.Parse(md.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("mcphttp: ResourceMetadata.Resource %q must be an absolute http(s) URL without query or fragment", md.Resource)
	}
	if len(md.AuthorizationServers) == 0 {
		return "", errors.New("mcphttp: ResourceMetadata.AuthorizationServers must name at least one authorization server")
	}
	for _, as := range md.AuthorizationServers {
		a, err := url.Parse(as)
		if err != nil || (a.Scheme != "https" && a.Scheme != "http") || a.Host == "" {
			return "", fmt.Errorf("mcphttp: authorization server %q must be an absolute http(s) URL", as)
		}
	}
	return u.Scheme + "://" + u.Host + wellKnownPRM + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}
