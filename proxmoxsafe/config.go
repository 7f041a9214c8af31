package proxmoxsafe

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"

	"github.com/go-playground/validator/v10"
	"github.com/hashicorp/go-cleanhttp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
)

// DefaultTimeout bounds each request to Proxmox when [Config.Timeout] is zero.
const DefaultTimeout = 30 * time.Second

// DefaultMaxResponseBytes bounds each response body when
// [Config.MaxResponseBytes] is zero.
const DefaultMaxResponseBytes = pve.DefaultMaxBody

// Config configures a [Client]. URL is required, and exactly one of an API
// token (TokenID and TokenSecret, recommended) or a user (Username and
// Password); every other zero value is safe and documented on its field.
type Config struct {
	// URL is the Proxmox VE address, "https://host:8006", with or without
	// the "/api2/json" suffix. It must not carry credentials, a query or a
	// fragment.
	URL string
	// ClusterURL, when set, is the address approvals and audit records
	// name the cluster by ([Client.Cluster]) instead of URL's scheme and
	// host, e.g. "https://pve-lab.example:8006": for a cluster the client
	// reaches under an address that changes (the binary's demo starts its
	// simulated cluster on a new port every run). Approvals given for one
	// ClusterURL never approve a call of a client with another, so never
	// give two clusters the same one. Same rules as URL.
	ClusterURL string
	// ClusterName, when set, names the cluster for people and models: a
	// server that serves several clusters (mcpserver.NewFleet) knows each
	// by its name, and a call names the cluster it is for. It is part of
	// what approvals and audit records name the cluster by
	// ([Cluster.Name]), and every approval phrase ends in " cluster=<name>"
	// ("APPROVE shutdown pve1/qemu/101 cluster=lab"): two clusters may
	// both have pve1/qemu/101, and a phrase given for one must not approve
	// the same action on the other. A lower-case DNS label of at most 32
	// characters ([ClusterNamePattern]); "" (the default) names none and
	// leaves the phrases as they are.
	ClusterName string
	// TokenID is the API token id, "user@realm!tokenname".
	TokenID string
	// TokenSecret is the token's secret (a UUID). It is sent only in the
	// Authorization header and never appears in errors, logs or audit records.
	TokenSecret string

	// Username and Password select ticket authentication instead of a
	// token: "user@realm" (or "user" with Realm) and its password, for
	// accounts without two-factor authentication. The client logs in with
	// POST /access/ticket, renews the ticket well before it expires and
	// logs in again when Proxmox rejects it; see auth_ticket.go. The
	// password, ticket and CSRF token never appear in errors, logs or
	// audit records. Password must be at least 8 characters.
	Username string
	Password string
	// Realm, when set, is appended to Username ("root" + "pam" =
	// "root@pam"), unless Username already ends in "@" + Realm.
	Realm string
	// TicketLifetime is how long the server accepts a ticket; zero means
	// [DefaultTicketLifetime] (Proxmox's fixed 2 hours). Tickets are
	// renewed after half of it. Set it only for a server with another
	// lifetime, such as a proxmoxtest server with a short TicketLifetime.
	TicketLifetime time.Duration

	// CACertPEM, when set, is the PEM bundle of CAs trusted for the server
	// certificate, instead of the system roots.
	CACertPEM []byte
	// Fingerprint, when set, pins the server's leaf certificate by the SHA-256
	// of its DER encoding, as hex with or without colons (the form
	// `pvenode cert info` prints). With a pin, chain verification is replaced
	// by the pin unless CACertPEM is also set, in which case both must pass.
	Fingerprint string
	// InsecureSkipVerify turns off certificate verification entirely. It is
	// refused together with Fingerprint or CACertPEM, and logged loudly.
	InsecureSkipVerify bool
	// AllowInsecureHTTP permits a plain http:// URL. Off by default: the API
	// token would cross the network in clear text.
	AllowInsecureHTTP bool

	// HTTPClient, when set, is used instead of go-cleanhttp's pooled client.
	// It is copied: its Transport is wrapped by the policy guard, redirects
	// are refused, and if its Transport is nil or an *http.Transport the TLS
	// settings above are applied to a clone. Any other Transport must not be
	// combined with the TLS settings. Its Timeout, if set, is the bound of
	// each request instead of Timeout below (enforced as a deadline on each
	// request's context; the copy's own Timeout is cleared).
	HTTPClient *http.Client
	// Timeout bounds each request (sending it and reading the whole
	// answer); zero means [DefaultTimeout].
	Timeout time.Duration
	// MaxResponseBytes bounds each response body; zero means
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// UserAgent is sent with every request; empty means "proxmox-safe-mcp".
	UserAgent string
	// Logger receives one line per operation; nil discards.
	Logger *slog.Logger
	// OnRequest, when set, is called after every request to Proxmox
	// returns (or fails), from the goroutine that sent it: for metrics of
	// upstream latency and errors. It must not block. nil: not called.
	OnRequest func(RequestStats)

	// Policy is the operator's upper bound on what the client may do. The
	// zero Policy allows cluster-wide reads and nothing else.
	Policy Policy
	// Health are the thresholds of [Client.HealthReport]; the zero value
	// of each is its default.
	Health HealthThresholds
	// Audit receives a record of every mutation attempt before anything is
	// sent. Required when Policy enables any mutation class.
	Audit AuditSink
	// Approvers are the approvers [Policy.Approvals] can name, each by its
	// [Approver.Name] (e.g. an "elicit" or "grant" approver, or your own).
	// The levels "phrase" ([PhraseApprover]) and "none" are built in; a
	// name may appear once. Empty is fine when every class uses the phrase.
	Approvers []Approver
	// MaxWait caps how long [Client.Verify] (and the Wait of GuestPower and
	// SnapshotGuest) may wait: a longer requested timeout is clamped to it.
	// Zero means [DefaultMaxWait]; otherwise 1s to [MaxMaxWait].
	MaxWait time.Duration
	// LockDir, when set, makes the one-mutation-per-guest rule host-wide:
	// every mutation holds an exclusive flock on LockDir/guest-<vmid>.lock
	// from the policy check until its request was sent (or its wait
	// ended), so that two processes sharing the directory — two servers,
	// or a server and `call`s — cannot change one guest at the same moment;
	// the loser is refused like a second mutation in this process. The
	// directory is created (0700) at the first mutation. Empty means the
	// guard covers this Client only. Not available where flock is not
	// (Windows): New refuses it there.
	LockDir string
}

// ConfigError is the error [New] returns for an invalid [Config]. Field
// names the Config field at fault ("URL", "Fingerprint",
// "Policy.AllowedNodes", …), so a program can tell its user which setting
// to fix. The message never contains the token secret.
type ConfigError struct {
	Field   string
	Problem string
}

// Error implements the error interface.
func (e *ConfigError) Error() string { return "proxmoxsafe: invalid config: " + e.Problem }

// configError builds a *ConfigError about field (a Config field path such
// as "URL" or "Policy.AllowedNodes").
func configError(field, format string, args ...any) error {
	return &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// New checks cfg and returns a ready Client. Every configuration mistake is
// reported here, never at the first call. New does no I/O.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.URL, cfg.AllowInsecureHTTP)
	if err != nil {
		return nil, err
	}
	clusterURL, err := clusterAddress(cfg, base)
	if err != nil {
		return nil, err
	}
	if cfg.ClusterName != "" && !ValidClusterName(cfg.ClusterName) {
		return nil, configError("ClusterName", "ClusterName %.64q is not a lower-case DNS label of at most 32 characters (%s)", cfg.ClusterName, ClusterNamePattern)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	auth, err := buildAuth(cfg, logger) // auth_ticket.go
	if err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 {
		return nil, configError("Timeout", "Timeout must not be negative")
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, configError("MaxResponseBytes", "MaxResponseBytes must not be negative")
	}
	pol, err := compilePolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if err := cfg.Health.check(); err != nil {
		return nil, err
	}
	maxWait, err := checkMaxWait(cfg.MaxWait)
	if err != nil {
		return nil, err
	}
	// A typed nil (var a *auditlog.Log; cfg.Audit = a) is not "no sink": it
	// would pass the nil check below and panic at the first mutation.
	if isNilValue(cfg.Audit) {
		return nil, configError("Audit", "Audit is a nil %T; set a working sink (auditlog.New or auditlog.Open) or leave Audit unset", cfg.Audit)
	}
	approvers, err := approverTable(cfg.Approvers, pol)
	if err != nil {
		return nil, err
	}
	if pol.anyClass() && cfg.Audit == nil {
		return nil, configError("Audit", "Audit is required when mutation classes are enabled (use auditlog.New or auditlog.Open)")
	}
	if cfg.LockDir != "" && !localfile.LockingSupported {
		return nil, configError("LockDir", "LockDir is not supported on this platform (no flock); leave it empty")
	}
	httpClient, err := buildHTTPClient(cfg, base, pol, auth.ticket != nil)
	if err != nil {
		return nil, err
	}
	if cfg.InsecureSkipVerify {
		logger.Warn("TLS certificate verification is DISABLED for Proxmox: anyone on the network path can read the API token",
			slog.String("url", base.Redacted()))
	}
	for _, cl := range pol.src.Classes {
		if slices.Contains(pol.approvalsFor(cl), LevelNone) {
			logger.Warn("a mutation class needs no approval (approval level none): only its own guards and the audit log stand between a caller and the action",
				slog.String("class", string(cl)))
		}
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = "proxmox-safe-mcp"
	}
	return &Client{
		api: &pve.Client{
			HTTP:      httpClient,
			Base:      base,
			Auth:      auth.auth,
			UserAgent: ua,
			MaxBody:   cfg.MaxResponseBytes,
			Redact:    redact.NewRedactor(auth.secrets...),
			Timeout:   requestTimeout(cfg),
		},
		tokenID:        auth.principal,
		clusterURL:     clusterURL,
		clusterName:    cfg.ClusterName,
		ticket:         auth.ticket,
		ticketLifetime: auth.lifetime,
		policy:         pol,
		audit:          cfg.Audit,
		approvers:      approvers,
		maxWait:        maxWait,
		health:         cfg.Health,
		lockDir:        cfg.LockDir,
		log:            logger,
		validate:       inputValidator(),
	}, nil
}

// approverTable indexes the configured approvers by name, adds the
// built-in phrase approver, and checks that every level the policy names
// has an approver.
func approverTable(list []Approver, pol *policy) (map[ApprovalLevel]Approver, error) {
	table := map[ApprovalLevel]Approver{LevelPhrase: PhraseApprover{}}
	for i, a := range list {
		if a == nil || isNilValue(a) {
			return nil, configError("Approvers", "Approvers[%d] is nil (%T)", i, a)
		}
		name := ApprovalLevel(a.Name())
		switch {
		case name == "" || name == LevelNone || name == LevelPhrase:
			// "phrase" and "none" are built in: an audit record that says
			// "phrase" always means the exact-phrase check.
			return nil, configError("Approvers", "Approvers[%d] (%T) has the name %s, which is empty or built in", i, a, sanitize.Quote(name))
		case table[name] != nil:
			return nil, configError("Approvers", "Approvers: two approvers are named %s", sanitize.Quote(name))
		}
		table[name] = a
	}
	for cl, levels := range pol.approvals {
		for _, l := range levels {
			if l != LevelNone && table[l] == nil {
				return nil, configError("Policy.Approvals", "Policy.Approvals: class %s uses approval level %s, but no approver of that name is in Approvers", sanitize.Quote(cl), sanitize.Quote(l))
			}
		}
	}
	// A class left out of Policy.Approvals uses DefaultApprovals, which for
	// a class that destroys without a way back names approvers too.
	for _, cl := range pol.src.Classes {
		if _, set := pol.approvals[cl]; set {
			continue
		}
		for _, l := range DefaultApprovals(cl) {
			if l != LevelNone && table[l] == nil {
				return nil, configError("Approvers", "Approvers: class %s defaults to the approval levels %s (DefaultApprovals), but no approver named %s is in Approvers; add one, or set Policy.Approvals for the class", sanitize.Quote(cl), levelList(DefaultApprovals(cl)), sanitize.Quote(l))
			}
		}
	}
	return table, nil
}

// isNilValue reports whether v is an interface holding a nil pointer, map,
// slice, func or channel.
func isNilValue(v any) bool {
	if v == nil {
		return false
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// checkPort refuses a port no connection can use: url.Parse takes any
// digits (":99999"), and the first call would be the first to fail.
func checkPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(u.Host, ":") {
			return configError("URL", "URL has an empty port after %s (Proxmox serves the API on port 8006)", sanitize.Quote(u.Hostname()+":"))
		}
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return configError("URL", "URL port %s is not a port number from 1 to 65535 (Proxmox serves the API on port 8006)", sanitize.Quote(p))
	}
	return nil
}

func parseBaseURL(raw string, allowHTTP bool) (*url.URL, error) {
	if raw == "" {
		return nil, configError("URL", "URL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, configError("URL", "URL does not parse")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !allowHTTP {
			return nil, configError("URL", "URL uses plain http://, which would send the API token in clear text; use https:// or set AllowInsecureHTTP")
		}
	default:
		return nil, configError("URL", "URL scheme must be https (got %s)", sanitize.Quote(u.Scheme))
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, configError("URL", "URL has no host")
	}
	if err := checkPort(u); err != nil {
		return nil, err
	}
	if u.User != nil {
		return nil, configError("URL", "URL must not contain credentials; use TokenID and TokenSecret")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, configError("URL", "URL must not contain a query or fragment")
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/api2/json") {
		p += "/api2/json"
	}
	if p != "/api2/json" {
		return nil, configError("URL", "URL path must be empty or /api2/json (got %s)", sanitize.Quote(u.Path))
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}, nil
}

// minIdleConnsPerHost is the fewest idle keep-alive connections the
// default transport keeps to Proxmox: enough for the requests that clients
// served at once send together (over HTTP, 64 sessions calling at the same
// time; over stdio, the reads one call sends at once, up to
// maxReadsAtOnce). Every request beyond the idle pool closes its
// connection afterwards, so the next one pays a TLS handshake: with
// go-cleanhttp's default of GOMAXPROCS+1, 64 HTTP clients calling
// list_guests spent a tenth of the server's CPU in handshakes. A pool only
// fills as far as requests ran at once, so a quiet client keeps few; the
// idle ones close after the transport's IdleConnTimeout, and pveproxy
// takes up to 500 connections per worker.
const minIdleConnsPerHost = 64

func buildHTTPClient(cfg Config, base *url.URL, pol *policy, login bool) (*http.Client, error) {
	tlsCfg, err := buildTLS(cfg)
	if err != nil {
		return nil, err
	}
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	} else {
		hc = *cleanhttp.DefaultPooledClient()
	}
	rt := hc.Transport
	switch t := rt.(type) {
	case nil:
		tr := cleanhttp.DefaultPooledTransport()
		tr.TLSClientConfig = tlsCfg
		tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, minIdleConnsPerHost)
		rt = tr
	case *http.Transport:
		tr := t.Clone()
		if tlsCfg != nil {
			tr.TLSClientConfig = tlsCfg
		}
		if cfg.HTTPClient == nil { // ours; a caller's transport is kept as set
			tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, minIdleConnsPerHost)
		}
		rt = tr
	default:
		if tlsCfg != nil {
			return nil, configError("HTTPClient", "HTTPClient: TLS settings cannot be applied to a custom Transport of type %T", t)
		}
	}
	hc.Transport = newGuard(rt, base.Path, pol, login)
	if cfg.OnRequest != nil {
		hc.Transport = observed{next: hc.Transport, on: cfg.OnRequest}
	}
	hc.Timeout = 0 // requestTimeout, enforced by pve.Client
	hc.CheckRedirect = func(*http.Request, []*http.Request) error {
		return errors.New("refusing to follow a redirect from Proxmox")
	}
	return &hc, nil
}

// requestTimeout is the bound of each request to Proxmox: the caller's
// HTTPClient.Timeout if it set one, else Config.Timeout, else
// DefaultTimeout. pve.Client enforces it with a context deadline, and the
// http.Client is left without one (see pve.Client.Timeout: with the route
// guard as its Transport, http.Client.Timeout costs a goroutine per
// request).
func requestTimeout(cfg Config) time.Duration {
	switch {
	case cfg.HTTPClient != nil && cfg.HTTPClient.Timeout > 0:
		return cfg.HTTPClient.Timeout
	case cfg.Timeout > 0:
		return cfg.Timeout
	}
	return DefaultTimeout
}

// Client performs safe, typed operations on one Proxmox VE cluster. It is
// safe for concurrent use.
type Client struct {
	api     *pve.Client
	tokenID string // the token id, or the user id with ticket authentication
	// clusterURL names the cluster in approvals and audit records (see
	// Cluster): Config.ClusterURL, else URL's scheme and host.
	clusterURL string
	// clusterName is Config.ClusterName.
	clusterName string
	// ticket is the login state with ticket authentication, else nil.
	ticket         *pve.TicketAuth
	ticketLifetime time.Duration
	policy         *policy
	audit          AuditSink
	approvers      map[ApprovalLevel]Approver // by name; see approverTable
	maxWait        time.Duration              // the operator's cap on waits; see Config.MaxWait
	log            *slog.Logger
	validate       *validator.Validate
	busy           inflight
	lockDir        string // see Config.LockDir; "" for no host-wide lock
	health         HealthThresholds
}

// CloseIdleConnections closes idle keep-alive connections to Proxmox. Call
// it when a Client is no longer needed; a Client holds no other resources.
func (c *Client) CloseIdleConnections() { c.api.HTTP.CloseIdleConnections() }

// TokenID returns the configured API token id (never the secret), or the
// user id (user@realm) with ticket authentication; see [Client.AuthStatus].
func (c *Client) TokenID() string { return c.tokenID }

// BaseURL returns the API root the client talks to.
func (c *Client) BaseURL() string { return c.api.Base.String() }

// Policy returns a copy of the effective policy.
func (c *Client) Policy() Policy { return c.policy.export() }
