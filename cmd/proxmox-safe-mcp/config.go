package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Commands the binary understands; serve is the default.
const (
	cmdServe = "serve"
	cmdTools = "tools"
	cmdCall  = "call"
)

// maxSecretFileBytes bounds PVE_API_TOKEN_SECRET_FILE. A token secret is a
// UUID; anything much larger is the wrong file.
const maxSecretFileBytes = 4096

// secret holds the token secret. Its String, GoString and LogValue methods
// never show the value, so an accidental %v, %#v or slog attribute cannot
// leak it; only reveal returns it.
type secret struct{ v string }

func (s secret) String() string             { return "[redacted]" }
func (s secret) GoString() string           { return "[redacted]" }
func (s secret) LogValue() slog.Value       { return slog.StringValue("[redacted]") }
func (s secret) reveal() string             { return s.v }
func (s secret) empty() bool                { return s.v == "" }
func (s secret) Format(f fmt.State, _ rune) { io.WriteString(f, "[redacted]") }

// config is the binary's configuration after flags and environment are
// merged. Nothing in it has been checked against Proxmox yet.
type config struct {
	Command  string
	Tool     string // call: the tool name
	ToolArgs string // call: JSON object, "{}" when omitted

	Help    bool
	Version bool
	Demo    bool
	JSON    bool // tools, doctor: JSON on stdout

	URL               string
	TokenID           string
	TokenSecret       secret
	secretFrom        string // the variable or flag the secret came from
	TokenSecretFile   string
	Username          string // password (ticket) authentication: auth.go
	Password          secret
	passwordFrom      string // the variable the password came from
	PasswordFile      string
	Realm             string
	CAFile            string
	Fingerprint       string
	TLSInsecure       bool
	AllowInsecureHTTP bool
	AllowedNodes      []string
	Profile           string
	ReadOnly          bool
	GatewayWrite      bool // adds the gateway-write class to the profile's classes
	AuditLog          string
	AuditKeyFile      string                                            // "": the log's path + ".key" (audit_setup.go)
	AuditSyslog       string                                            // "": no syslog copy
	LockDir           string                                            // "": <state dir>/locks (audit_setup.go)
	auditDefault      bool                                              // AuditLog is the default path, not a setting
	Approvals         map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel // approvals.go
	GrantDir          string                                            // "": beside the audit log (approve.go)
	ApprovalPage      approvalPageConfig                                // HTTP mode's approval page (approvalpage.go)
	ElicitKeyFile     string                                            // "": elicit.key beside the audit log when used (elicit_key.go)
	MaxWait           time.Duration                                     // 0: the library's default cap
	LogLevel          slog.Level
	logLevelSet       bool
	HTTP              httpConfig  // --http and MCP_* (http.go)
	Guards            guardConfig // protected guests, uptime, retention (responder.go)
	ConfigKeys        []string    // nil: the library's default (config_keys.go)

	// warnings are logged once the logger exists.
	warnings []string
	// credentialsDir is systemd's $CREDENTIALS_DIRECTORY, or "".
	credentialsDir string
	// setFrom maps a setting's own variable to the alias that supplied
	// its value, for messages that name what the user wrote (see source).
	setFrom map[string]string
}

// configError is a startup error: one line, exit code 2.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func cfgErr(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// errHelp asks for the usage text on stdout and exit code 0.
var errHelp = errors.New("help requested")

// setting is one configuration knob: a flag, an environment variable, or
// both. Both go through the same set function, so they accept exactly the
// same values.
type setting struct {
	flag    string // without dashes; "" = no flag
	env     string // "" = no environment variable
	def     string // default shown in --help
	boolean bool
	help    string
	set     func(c *config, v string) error
	// aliases are other programs' names for this setting (alias.go).
	aliases []alias
	// secret keeps the value out of error messages (a conflict between
	// the setting's name and an alias names both but shows no value).
	secret bool
}

// name says where a value came from, for error messages.
func (s *setting) name(fromFlag bool) string {
	switch {
	case fromFlag && s.env != "":
		return "--" + s.flag + " (" + s.env + ")"
	case fromFlag:
		return "--" + s.flag
	case s.flag != "":
		return s.env + " (--" + s.flag + ")"
	default:
		return s.env
	}
}

// parseBool is deliberately stricter than strconv.ParseBool: a typo such as
// "ture" or "yes" must not silently mean false.
func parseBool(v string) (bool, error) {
	switch v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("must be one of true, false, 1, 0 (got %q)", v)
}

func boolSetter(dst func(c *config) *bool) func(*config, string) error {
	return func(c *config, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*dst(c) = b
		return nil
	}
}

func stringSetter(dst func(c *config) *string) func(*config, string) error {
	return func(c *config, v string) error {
		*dst(c) = strings.TrimSpace(v)
		return nil
	}
}

// settings is the single list behind flag parsing, environment lookup,
// --help and docs/CONFIGURATION.md.
var settings = append([]*setting{
	{flag: "demo", boolean: true,
		help: "run against an in-process simulated Proxmox VE cluster; ignores every PVE_* variable",
		set:  boolSetter(func(c *config) *bool { return &c.Demo })},
	{flag: "url", env: "PVE_URL",
		help:    "Proxmox VE API address, e.g. https://pve1.example.com:8006 (required)",
		set:     stringSetter(func(c *config) *string { return &c.URL }),
		aliases: []alias{sameAlias("PVE_BASE_URL")}},
	{flag: "token-id", env: "PVE_API_TOKEN_ID",
		help: "API token id, user@realm!tokenname (required)",
		set:  stringSetter(func(c *config) *string { return &c.TokenID })},
	{env: "PVE_API_TOKEN_SECRET", secret: true,
		help: "API token secret (required unless PVE_API_TOKEN_SECRET_FILE is set); deliberately no flag: command lines are visible to other local users",
		set: func(c *config, v string) error {
			c.TokenSecret, c.secretFrom = secret{v}, "PVE_API_TOKEN_SECRET"
			return nil
		}},
	{flag: "token-secret-file", env: "PVE_API_TOKEN_SECRET_FILE",
		help: "file holding the API token secret; one trailing newline is removed",
		set:  stringSetter(func(c *config) *string { return &c.TokenSecretFile })},
	{flag: "username", env: "PVE_USERNAME",
		help: "instead of an API token: user for password (ticket) login, user@realm such as root@pam (or user with PVE_REALM); accounts with two-factor authentication are refused; tokens are recommended",
		set:  stringSetter(func(c *config) *string { return &c.Username })},
	{env: "PVE_PASSWORD", secret: true,
		help: "password of PVE_USERNAME (or PVE_PASSWORD_FILE); deliberately no flag: command lines are visible to other local users",
		set:  setPassword},
	{flag: "password-file", env: "PVE_PASSWORD_FILE",
		help: "file holding the password of PVE_USERNAME; one trailing newline is removed",
		set:  stringSetter(func(c *config) *string { return &c.PasswordFile })},
	{flag: "realm", env: "PVE_REALM",
		help: "realm appended to PVE_USERNAME when it has none, e.g. pam or pve",
		set:  stringSetter(func(c *config) *string { return &c.Realm })},
	{flag: "ca-file", env: "PVE_CA_FILE",
		help: "PEM file of the CA(s) that signed the Proxmox certificate, instead of the system roots",
		set:  stringSetter(func(c *config) *string { return &c.CAFile })},
	{flag: "tls-fingerprint", env: "PVE_TLS_FINGERPRINT",
		help: "SHA-256 fingerprint of the Proxmox certificate to pin (as `pvenode cert info` prints it)",
		set:  stringSetter(func(c *config) *string { return &c.Fingerprint })},
	{flag: "tls-insecure", env: "PVE_TLS_INSECURE", boolean: true, def: "false",
		help:    "DANGEROUS: skip TLS certificate verification entirely; prefer PVE_TLS_FINGERPRINT",
		set:     boolSetter(func(c *config) *bool { return &c.TLSInsecure }),
		aliases: []alias{invertedBoolAlias("PVE_VERIFY_SSL")}},
	{flag: "allow-insecure-http", env: "PVE_ALLOW_INSECURE_HTTP", boolean: true, def: "false",
		help: "DANGEROUS: allow a plain http:// URL (the token crosses the network in clear text)",
		set:  boolSetter(func(c *config) *bool { return &c.AllowInsecureHTTP })},
	{flag: "allowed-nodes", env: "PVE_ALLOWED_NODES", def: "none",
		help: "comma-separated nodes that node_status and every mutation may target; empty allows none",
		set: func(c *config, v string) error {
			c.AllowedNodes = nil
			for n := range strings.SplitSeq(v, ",") {
				n = strings.TrimSpace(n)
				if n == "" {
					continue
				}
				if !proxmoxsafe.ValidNode(n) {
					return fmt.Errorf("%q is not a valid Proxmox node name", n)
				}
				c.AllowedNodes = append(c.AllowedNodes, n)
			}
			return nil
		}},
	{flag: "profile", env: "PROXMOX_SAFE_PROFILE", def: string(proxmoxsafe.ProfileSafe),
		help: "mutation profile: readonly; safe (power + snapshot); responder (alias claptrap: the read tools plus vm_start, vm_reboot, vm_reset and snapshot_cleanup, guarded, for an automated responder); or admin (safe plus power-extra, snapshot-admin and config: suspend, resume, roll back and delete snapshots, grow disks, set config keys; each behind its approval)",
		set: func(c *config, v string) error {
			v = strings.TrimSpace(v)
			if _, err := proxmoxsafe.Profile(v).Classes(); err != nil {
				return fmt.Errorf("unknown profile %q (known: %s, %s, %s or its alias %s, %s)", v, proxmoxsafe.ProfileReadOnly, proxmoxsafe.ProfileSafe, proxmoxsafe.ProfileResponder, proxmoxsafe.ProfileClaptrap, proxmoxsafe.ProfileAdmin)
			}
			c.Profile = v
			return nil
		},
		aliases: []alias{sameAlias("MCP_PROXMOX_PROFILE")}},
	{flag: "read-only", env: "PROXMOX_SAFE_READ_ONLY", boolean: true, def: "false",
		help: "refuse every mutation and send only GET requests to Proxmox, whatever the profile",
		set:  boolSetter(func(c *config) *bool { return &c.ReadOnly })},
	{flag: "gateway-write", env: "PROXMOX_SAFE_GATEWAY_WRITE", boolean: true, def: "false",
		help: "also enable the gateway-write class, which no profile enables: api_request sends one POST, PUT or DELETE to an API path outside the deny list, approved for its exact method, path and parameters (by default by elicit, then grant); read-only mode still wins",
		set:  boolSetter(func(c *config) *bool { return &c.GatewayWrite })},
	{flag: "approvals", env: "PROXMOX_SAFE_APPROVALS", def: "phrase for every class",
		help: "how each mutation class is approved, levels in order of preference: CLASS=LEVEL[,LEVEL…] separated by ';', e.g. power=elicit,phrase;snapshot=elicit; levels: none, phrase (the exact APPROVE phrase), elicit (the person at the MCP client confirms in a form; a client that cannot elicit gets the next level or a refusal), grant (the operator runs proxmox-safe-mcp approve CODE on the host)",
		set:  parseApprovals},
	{flag: "grant-dir", env: "PROXMOX_SAFE_GRANT_DIR", def: "grants beside the audit log",
		help: "directory of out-of-band grants (approval level grant); the approve, deny and grants commands find it the same way",
		set:  stringSetter(func(c *config) *string { return &c.GrantDir })},
	{flag: "operator-token-file", env: "PROXMOX_SAFE_OPERATOR_TOKEN_FILE", def: "off",
		help: "HTTP mode: serve the operator's approval page for grants at /approve/ on the MCP listener, behind this file's secret (at least 16 characters, e.g. openssl rand -hex 32; never the MCP token)",
		set:  stringSetter(func(c *config) *string { return &c.ApprovalPage.TokenFile })},
	{flag: "operator-name", env: "PROXMOX_SAFE_OPERATOR_NAME", def: approvalweb.DefaultOperator,
		help: "the name recorded (as " + approvalweb.OperatorPrefix + "NAME) in grants and audit records for decisions made on the approval page",
		set:  stringSetter(func(c *config) *string { return &c.ApprovalPage.Operator })},
	{flag: "approval-url", env: "PROXMOX_SAFE_APPROVAL_URL", def: "http://ADDR/approve/ on loopback",
		help: "the approval page's URL as the operator opens it (its path is /approve/); named in grant refusals and URL elicitations; https makes the login cookie Secure",
		set:  setApprovalURL},
	{flag: "elicit-key-file", env: "PROXMOX_SAFE_ELICIT_KEY_FILE", def: "elicit.key beside the audit log when a class uses elicit; random per start in the demo",
		help: "file holding the key (64 hex digits, e.g. openssl rand -hex 32) that seals elicitation state, so an elicitation pending across a restart can still be answered; created 0600 when missing; refused unless owned by you and not readable by group or others",
		set:  stringSetter(func(c *config) *string { return &c.ElicitKeyFile })},
	{flag: "audit-log", env: "PROXMOX_SAFE_AUDIT_LOG", def: "$XDG_STATE_HOME/proxmox-safe-mcp/audit.jsonl when mutations are enabled",
		help:    "append-only, keyed and sealed JSON-lines audit log; missing parent directories are created (0700), the file 0600",
		set:     stringSetter(func(c *config) *string { return &c.AuditLog }),
		aliases: []alias{sameAlias("MCP_PROXMOX_AUDIT_LOG")}},
	{flag: "audit-key-file", env: "PROXMOX_SAFE_AUDIT_KEY_FILE", def: "the audit log's path + .key",
		help: "file holding the audit log's HMAC key (64 hex digits, e.g. openssl rand -hex 32); created 0600 with a new log; keep it where the log's readers cannot read it",
		set:  stringSetter(func(c *config) *string { return &c.AuditKeyFile })},
	{flag: "audit-syslog", env: "PROXMOX_SAFE_AUDIT_SYSLOG", def: "off",
		help: "also send every audit record to syslog, to keep a copy off the host: local (the local syslog/journald socket), udp://HOST:PORT, tcp://HOST:PORT or unix:///PATH",
		set:  setAuditSyslog},
	{flag: "lock-dir", env: "PROXMOX_SAFE_LOCK_DIR", def: "locks/ beside the audit log",
		help: "directory of per-guest lock files shared by every server and call on this host, so two processes never change one guest at the same moment",
		set:  stringSetter(func(c *config) *string { return &c.LockDir })},
	{flag: "max-wait", env: "PROXMOX_SAFE_MAX_WAIT", def: proxmoxsafe.DefaultMaxWait.String(),
		help: "longest a mutation tool may wait for its task and the result (tool parameter timeout_seconds is capped to it), a duration from 1s to 1h such as 120s or 5m",
		set:  parseMaxWait},
	{flag: "log-level", env: "PROXMOX_SAFE_LOG_LEVEL", def: "info; error for tools and call",
		help: "stderr log level: debug, info, warn or error",
		set: func(c *config, v string) error {
			var l slog.Level
			if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
				return errors.New("must be one of debug, info, warn, error")
			}
			c.LogLevel, c.logLevelSet = l, true
			return nil
		}},
	// HTTP transport (http.go).
	{flag: "http", env: "MCP_HTTP_ADDR", def: "off: stdio",
		help: "serve MCP over streamable HTTP on ADDR instead of stdio: HOST:PORT, PORT (host 127.0.0.1) or HOST (port 8000), e.g. 127.0.0.1:8000; HOST is an IP address or localhost; a non-loopback address needs MCP_AUTH_TOKEN",
		set:  stringSetter(func(c *config) *string { return &c.HTTP.Addr })},
	{flag: "transport", env: "MCP_TRANSPORT", def: "stdio; streamable-http when --http is set",
		help: "stdio, streamable-http (also: http), or sse: the legacy HTTP+SSE transport for clients that have not moved to streamable HTTP (same checks, default path /sse); the HTTP transports listen on --http",
		set:  setTransport},
	{env: "MCP_HOST", def: defaultHTTPHost,
		help: "host part of MCP_HTTP_ADDR, for deployments that set host and port apart; must agree with MCP_HTTP_ADDR when both are set",
		set:  stringSetter(func(c *config) *string { return &c.HTTP.host })},
	{env: "MCP_PORT", def: defaultHTTPPort,
		help: "port part of MCP_HTTP_ADDR (see MCP_HOST)",
		set:  stringSetter(func(c *config) *string { return &c.HTTP.port })},
	{env: "MCP_IMAGE_HTTP_ADDR", def: "unset",
		help: "for container images: serve streamable HTTP on this address unless the deployment's own settings (MCP_TRANSPORT, MCP_HTTP_ADDR, MCP_HOST, MCP_PORT) say otherwise; they override it without conflict, and MCP_HOST or MCP_PORT alone take the other half from it",
		set:  stringSetter(func(c *config) *string { return &c.HTTP.imageAddr })},
	{flag: "http-path", env: "MCP_HTTP_PATH", def: defaultHTTPPath + "; /sse for sse",
		help:    "URL path of the MCP endpoint",
		set:     stringSetter(func(c *config) *string { return &c.HTTP.Path }),
		aliases: []alias{sameAlias("MCP_PATH")}},
	{env: "MCP_AUTH_TOKEN", secret: true,
		help: "bearer token HTTP clients must send (at least 32 characters, e.g. openssl rand -hex 32); deliberately no flag",
		set:  setAuthToken},
	{flag: "auth-token-file", env: "MCP_AUTH_TOKEN_FILE",
		help: "file holding the bearer token; one trailing newline is removed",
		set:  stringSetter(func(c *config) *string { return &c.HTTP.TokenFile })},
	{flag: "allowed-origins", env: "MCP_ALLOWED_ORIGINS", def: "none",
		help: "comma-separated browser origins (scheme://host[:port]) allowed to call the HTTP endpoint; any other Origin header gets 403",
		set:  listSetter(func(c *config) *[]string { return &c.HTTP.AllowedOrigins })},
	{flag: "allowed-hosts", env: "MCP_ALLOWED_HOSTS", def: "the bound address",
		help: "comma-separated extra Host header values (name or name:port) to accept, e.g. behind a proxy or a container port mapping; any other Host gets 403",
		set:  listSetter(func(c *config) *[]string { return &c.HTTP.AllowedHosts })},
	{flag: "stateless", env: "MCP_STATELESS", boolean: true, def: "false",
		help: "HTTP without sessions: no server-to-client requests; GET and DELETE answer 405",
		set:  boolSetter(func(c *config) *bool { return &c.HTTP.Stateless })},
	{flag: "session-timeout", env: "MCP_SESSION_TIMEOUT", def: defaultSessionTimeout,
		help: "close an HTTP session after this long without a request, e.g. 30m; 0 never closes idle sessions",
		set:  setSessionTimeout},
	{flag: "max-sessions", env: "MCP_MAX_SESSIONS", def: strconv.Itoa(mcphttp.DefaultMaxSessionsPerIdentity),
		help: "most HTTP sessions one token may hold open at a time (429 beyond it); 0 means no cap",
		set:  limitSetter(func(c *config) *int { return &c.HTTP.MaxSessions })},
	{flag: "max-in-flight", env: "MCP_MAX_IN_FLIGHT", def: strconv.Itoa(mcphttp.DefaultMaxInFlight),
		help: "most HTTP requests served at once (503 with Retry-After beyond it); 0 means no bound",
		set:  limitSetter(func(c *config) *int { return &c.HTTP.MaxInFlight })},
	{flag: "shutdown-timeout", env: "MCP_SHUTDOWN_TIMEOUT", def: defaultShutdownTimeout.String(),
		help: "on SIGTERM/SIGINT, how long HTTP calls in flight may take to finish before they are cut off",
		set:  setShutdownTimeout},
	{flag: "allow-unauthenticated-remote", env: "MCP_ALLOW_UNAUTHENTICATED_REMOTE", boolean: true, def: "false",
		help: "DANGEROUS: serve HTTP without MCP_AUTH_TOKEN, on any address; only behind a proxy that authenticates every request (warned at every start)",
		set:  boolSetter(func(c *config) *bool { return &c.HTTP.AllowUnauth })},
	{flag: "auth-server", env: "MCP_AUTH_SERVER", def: "none",
		help: "authorization server URL to announce in RFC 9728 protected resource metadata (/.well-known/oauth-protected-resource); needs MCP_AUTH_TOKEN",
		set:  urlSetter(func(c *config) *string { return &c.HTTP.AuthServer })},
	{flag: "public-url", env: "MCP_PUBLIC_URL", def: "http://ADDR/PATH on loopback",
		help: "the MCP endpoint URL clients use (the RFC 9728 resource); only with MCP_AUTH_SERVER",
		set:  urlSetter(func(c *config) *string { return &c.HTTP.PublicURL })},
	{flag: "json", boolean: true, def: "false",
		help: "tools and doctor: print JSON on stdout instead of text",
		set:  boolSetter(func(c *config) *bool { return &c.JSON })},
	{flag: "version", boolean: true,
		help: "print the version and exit",
		set:  boolSetter(func(c *config) *bool { return &c.Version })},
}, append(responderSettings(), configKeySettings()...)...)

// settingValue adapts a setting to flag.Value. It keeps its own error in
// *failed, so the message reaches the user without the flag package's
// wrapping (which quotes the raw value).
type settingValue struct {
	c      *config
	s      *setting
	failed *error
}

func (v settingValue) String() string   { return "" }
func (v settingValue) IsBoolFlag() bool { return v.s.boolean }
func (v settingValue) Set(x string) error {
	if err := v.s.set(v.c, x); err != nil {
		*v.failed = fmt.Errorf("%s: %w", v.s.name(true), err)
		return *v.failed
	}
	return nil
}

// parseConfig merges args and the environment (read through lookup, so tests
// need no os.Setenv) into a config and checks it. Flags win over the
// environment; an empty environment variable counts as unset. Flags may come
// before or after the command.
func parseConfig(args []string, lookup func(string) (string, bool)) (*config, error) {
	c := &config{Profile: string(proxmoxsafe.ProfileSafe), ToolArgs: "{}"}
	fs := flag.NewFlagSet("proxmox-safe-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var setErr error
	for _, s := range settings {
		if s.flag != "" {
			fs.Var(settingValue{c, s, &setErr}, s.flag, s.help)
		}
	}

	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			switch {
			case errors.Is(err, flag.ErrHelp):
				return c, errHelp
			case setErr != nil:
				return nil, cfgErr("%v", setErr)
			}
			return nil, cfgErr("%s", flagError(err))
		}
		after := fs.Args()
		if len(after) == 0 {
			break
		}
		if i := len(rest) - len(after); i > 0 && rest[i-1] == "--" {
			pos = append(pos, after...)
			break
		}
		pos = append(pos, after[0])
		rest = after[1:]
	}
	if c.Version {
		return c, nil
	}

	if err := parseCommand(c, pos); err != nil {
		if errors.Is(err, errHelp) {
			return c, err
		}
		return nil, err
	}

	fromFlag := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { fromFlag[f.Name] = true })
	for _, s := range settings {
		if c.Demo && s.flag != "" && fromFlag[s.flag] && strings.HasPrefix(s.env, "PVE_") {
			return nil, cfgErr("%s cannot be combined with --demo, which connects to its own simulated cluster", s.name(true))
		}
	}
	for _, s := range settings {
		if s.env == "" || (s.flag != "" && fromFlag[s.flag]) {
			continue
		}
		if c.Demo && strings.HasPrefix(s.env, "PVE_") {
			continue // demo mode never reads PVE_*: it must not touch a real cluster.
		}
		found, ok, err := s.lookupEnv(lookup)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := s.set(c, found.v); err != nil {
			if found.name != s.env {
				return nil, cfgErr("%s (alias of %s): %v", found.name, s.name(false), err)
			}
			return nil, cfgErr("%s: %v", s.name(false), err)
		}
		if found.name != s.env {
			if c.setFrom == nil {
				c.setFrom = map[string]string{}
			}
			c.setFrom[s.env] = found.name
		}
	}
	// --token-secret-file on the command line beats PVE_API_TOKEN_SECRET too,
	// and --password-file beats PVE_PASSWORD.
	if fromFlag["token-secret-file"] {
		c.TokenSecret, c.secretFrom = secret{}, ""
	}
	if fromFlag["password-file"] {
		c.Password, c.passwordFrom = secret{}, ""
	}
	if !c.logLevelSet && c.Command != cmdServe {
		// The result already says what happened; per-operation lines
		// (including the library's WARN for refusals) would repeat it.
		c.LogLevel = slog.LevelError
	}
	defaultStatePaths(c, lookup) // audit_setup.go
	c.credentialsDir, _ = lookup("CREDENTIALS_DIRECTORY")
	if err := c.checkLooseKeyFiles(); err != nil { // keyfile.go
		return c, err
	}
	if err := checkConfig(c); err != nil {
		return c, err
	}
	if err := checkHTTPConfig(c); err != nil { // after checkConfig, which reads the Proxmox secret file
		return c, err
	}
	return c, checkApprovalPage(c) // approvalpage.go; after checkHTTPConfig, which reads the MCP token
}

// flagError rewrites the flag package's messages into our one-line form.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag --" + strings.TrimLeft(name, "-") + " (see --help)"
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "flag --" + strings.TrimLeft(name, "-") + " needs a value"
	}
	return msg
}

func parseCommand(c *config, pos []string) error {
	if len(pos) == 0 {
		c.Command = cmdServe
		return nil
	}
	c.Command = pos[0]
	switch c.Command {
	case "help":
		return errHelp
	case cmdServe, cmdDoctor:
		if len(pos) > 1 {
			return cfgErr("%s takes no arguments (got %q)", c.Command, pos[1])
		}
	case cmdTools:
		if len(pos) > 2 {
			return cfgErr("tools takes at most one tool name (got %d arguments)", len(pos)-1)
		}
		if len(pos) == 2 {
			c.Tool = pos[1]
		}
	case cmdCall:
		if len(pos) < 2 || pos[1] == "" {
			return cfgErr("call needs a tool name: proxmox-safe-mcp call TOOL ['{\"json\":\"arguments\"}']")
		}
		if len(pos) > 3 {
			return cfgErr("call takes a tool name and at most one JSON argument (got %d arguments)", len(pos)-1)
		}
		c.Tool = pos[1]
		if len(pos) == 3 {
			c.ToolArgs = pos[2]
		}
	default:
		return cfgErr("unknown command %q (known: serve, tools, call, doctor, healthcheck, audit)", c.Command)
	}
	return nil
}

// mutating reports whether the effective policy enables any mutation class.
func (c *config) mutating() bool {
	return len(c.classes()) > 0 && !c.ReadOnly
}

// classes are the profile's classes, plus gateway-write when asked for.
func (c *config) classes() []proxmoxsafe.Class {
	classes, _ := proxmoxsafe.Profile(c.Profile).Classes()
	if c.GatewayWrite {
		classes = append(classes, proxmoxsafe.ClassGatewayWrite)
	}
	return classes
}

// checkConfig reports the first problem, naming the variable to fix. It reads
// the secret file (and nothing else) so that a bad file fails at startup.
func checkConfig(c *config) error {
	if c.Demo {
		return nil
	}
	if c.URL == "" {
		return cfgErr("PVE_URL (--url) is required, e.g. https://pve1.example.com:8006 (or try --demo, which needs no Proxmox)")
	}
	if strings.HasPrefix(strings.ToLower(c.URL), "http://") && !c.AllowInsecureHTTP {
		return cfgErr("PVE_URL (--url) uses plain http://, which would send the credentials in clear text: use https:// (Proxmox serves the API on port 8006), or set PVE_ALLOW_INSECURE_HTTP=true (--allow-insecure-http) if the network is trusted")
	}
	switch {
	case c.usesToken() && c.usesPassword():
		return cfgErr("set either an API token (PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET, recommended) or a user and password (PVE_USERNAME and PVE_PASSWORD), not both")
	case c.usesPassword():
		if err := checkPasswordConfig(c); err != nil { // auth.go
			return err
		}
		return checkConfigRest(c)
	}
	if c.TokenID == "" {
		return cfgErr("PVE_API_TOKEN_ID (--token-id) is required, e.g. automation@pve!mcp (or PVE_USERNAME and PVE_PASSWORD for a password login)")
	}
	if err := checkTokenID(c.TokenID); err != nil { // tokenid.go
		return err
	}
	switch {
	case c.TokenSecretFile != "" && !c.TokenSecret.empty():
		return cfgErr("set only one of PVE_API_TOKEN_SECRET and PVE_API_TOKEN_SECRET_FILE (--token-secret-file)")
	case c.TokenSecretFile != "":
		const name = "PVE_API_TOKEN_SECRET_FILE (--token-secret-file)"
		v, err := c.readSecretFile(name, c.TokenSecretFile) // keyfile.go
		if err != nil {
			return cfgErr("%s: %v", name, err)
		}
		c.TokenSecret, c.secretFrom = secret{v}, "PVE_API_TOKEN_SECRET_FILE"
	case c.TokenSecret.empty():
		return cfgErr("PVE_API_TOKEN_SECRET or PVE_API_TOKEN_SECRET_FILE (--token-secret-file) is required")
	}
	if strings.ContainsAny(c.TokenSecret.reveal(), " \t\r\n\v\f") {
		return cfgErr("%s: the token secret contains white space (value not shown)", c.secretFrom)
	}
	return checkConfigRest(c)
}

// checkConfigRest checks what does not depend on the authentication method.
func checkConfigRest(c *config) error {
	if c.TLSInsecure && (c.Fingerprint != "" || c.CAFile != "") {
		return cfgErr("PVE_TLS_INSECURE (--tls-insecure) cannot be combined with PVE_TLS_FINGERPRINT or PVE_CA_FILE: pinning or a CA already handles self-signed certificates")
	}
	if !sendsNoMutation(c.Command) && c.mutating() && c.AuditLog == "" && !c.Demo {
		return cfgErr("PROXMOX_SAFE_AUDIT_LOG (--audit-log) is required when the %q profile enables mutations, and there is no default because neither XDG_STATE_HOME nor HOME is set; set it to a file path, or run with PROXMOX_SAFE_READ_ONLY=true (--read-only)", c.Profile)
	}
	return nil
}

// pathErr drops the "open " prefix noise but keeps path and cause.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// usage prints every flag and variable with its default.
func usage(w io.Writer) {
	fmt.Fprint(w, `proxmox-safe-mcp: a safety-first MCP server for Proxmox VE.

Usage:
  proxmox-safe-mcp [flags]                       serve MCP over stdio (default; same as "serve")
  proxmox-safe-mcp [flags] --http 127.0.0.1:8000 serve MCP over streamable HTTP instead (needs MCP_AUTH_TOKEN)
  proxmox-safe-mcp healthcheck [--url URL]       probe a running HTTP server's /healthz (for containers)
  proxmox-safe-mcp audit verify|repair [FILE]    check an audit log, or remove a torn final line (see audit --help)
  proxmox-safe-mcp [flags] tools [TOOL]          list the tools this configuration exposes, or one tool's parameters
  proxmox-safe-mcp [flags] call TOOL ['{json}']  run one tool and print its result ("wait": true shows progress on stderr)
  proxmox-safe-mcp [flags] doctor                check the setup: reachability, TLS, token, nodes, privileges
  proxmox-safe-mcp --demo [tools|call ...]       the same, against a simulated cluster

Every flag may also be set by the environment variable shown; a flag wins
over its variable. Booleans accept exactly true, false, 1 or 0.

Flags:
`)
	for _, s := range settings {
		left := "  "
		if s.flag != "" {
			left += "--" + s.flag
			if !s.boolean {
				left += " value"
			}
		} else {
			left += "(no flag)"
		}
		env := ""
		if s.env != "" {
			names := []string{s.env}
			for _, a := range s.aliases {
				names = append(names, a.env)
			}
			env = " [" + strings.Join(names, ", ") + "]"
		}
		def := ""
		if s.def != "" {
			def = " (default " + s.def + ")"
		}
		fmt.Fprintf(w, "%s%s%s\n      %s\n", left, env, def, s.help)
	}
	fmt.Fprint(w, `  --help
      show this help

Exit codes: 0 success; 1 the tool call returned an error (call) or doctor found a problem; 2 bad usage or
configuration (also: call of a tool this configuration does not offer); 3 doctor: working, but the token
holds dangerous privileges it does not need; 4 call with "wait": true: the task had not finished (or could
not be confirmed) when the wait ended, it may still complete; 5 call with "wait": true: the task failed.
See docs/CONFIGURATION.md for details and examples.
`)
}

// parseMaxWait is strict like parseBool: a Go duration with a unit, within
// the library's bounds, so a typo ("120", "2 min") fails at startup
// instead of at the first waiting tool call.
func parseMaxWait(c *config, v string) error {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > proxmoxsafe.MaxMaxWait {
		return fmt.Errorf("must be a duration from 1s to 1h with a unit, e.g. 120s or 5m (got %q)", v)
	}
	c.MaxWait = d
	return nil
}
