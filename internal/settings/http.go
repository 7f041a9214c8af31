package settings

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// Defaults of the HTTP transport.
const (
	DefaultHTTPHost = "127.0.0.1"
	DefaultHTTPPort = "8000"
	// DefaultShutdownTimeout is how long SIGTERM waits for calls in flight.
	// It stays below Docker's and systemd's kill timeouts as configured in
	// docker-compose.yml (30s) and the unit (TimeoutStopSec=30).
	DefaultShutdownTimeout = 20 * time.Second
	// userStatic is the identity of the MCP_AUTH_TOKEN holder; sessions
	// are bound to it.
	userStatic = "mcp-auth-token"
)

// Transports (MCP_TRANSPORT).
const (
	TransportStdio      = "stdio"
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// HTTPConfig is the HTTP transport's part of config. After checkHTTPConfig,
// Addr "" means stdio, else Transport says which HTTP transport.
type HTTPConfig struct {
	Transport  string // "" until checkHTTPConfig: stdio, or streamable-http when Addr is set
	Addr       string // as given
	host, port string // MCP_HOST, MCP_PORT: Addr in two parts
	// imageAddr is MCP_IMAGE_HTTP_ADDR: the lowest-priority default a
	// container image sets, so that a deployment's own transport and
	// address settings (ours or the aliases) override it without conflict.
	imageAddr       string
	Listen          string // host:port to listen on, after defaults
	Loopback        bool
	Path            string
	Token           Secret
	TokenFrom       string
	TokenFile       string
	AllowedOrigins  []string
	AllowedHosts    []string
	Stateless       bool
	SessionTimeout  time.Duration // 0 = default; <0 = never
	MaxSessions     int           // per identity; 0 = default; <0 = no cap
	MaxInFlight     int           // 0 = default; <0 = no bound
	ShutdownTimeout time.Duration
	AllowUnauth     bool
	AuthServer      string
	PublicURL       string
}

// splitList parses a comma-separated setting.
func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkHTTPConfig validates the HTTP settings and reads the token file. It
// runs for serve only; other commands ignore MCP_* (a container sets them
// for the service, and "tools" in the same container must still work).
func checkHTTPConfig(c *Config) error {
	h := &c.HTTP
	if c.Command != CmdServe {
		return nil
	}
	if err := resolveTransport(h); err != nil || h.Addr == "" {
		return err
	}
	listen, loopback, err := ParseListenAddr(h.Addr)
	if err != nil {
		return Errorf("MCP_HTTP_ADDR (--http): %v", err)
	}
	h.Listen, h.Loopback = listen, loopback
	if h.Path == "" {
		h.Path = mcphttp.DefaultPath
		if h.Transport == TransportSSE {
			h.Path = mcphttp.DefaultSSEPath
		}
	}
	if h.Transport == TransportSSE && h.Stateless {
		return Errorf("MCP_STATELESS (--stateless) does not apply to MCP_TRANSPORT=sse: the legacy transport keeps a session per event stream")
	}
	if h.ShutdownTimeout == 0 {
		h.ShutdownTimeout = DefaultShutdownTimeout
	}
	switch {
	case h.TokenFile != "" && !h.Token.Empty():
		return Errorf("set only one of MCP_AUTH_TOKEN and MCP_AUTH_TOKEN_FILE (--auth-token-file)")
	case h.TokenFile != "":
		const name = "MCP_AUTH_TOKEN_FILE (--auth-token-file)"
		tok, err := c.readSecretFile(name, h.TokenFile) // secretfile.go
		if err != nil {
			return Errorf("%s: %v", name, err)
		}
		h.Token, h.TokenFrom = Secret{tok}, name
	}
	if !h.Token.Empty() {
		if err := mcphttp.CheckStaticToken(h.Token.Reveal()); err != nil {
			return Errorf("%s: %v", h.TokenFrom, err)
		}
		if h.Token.Reveal() == c.TokenSecret.Reveal() || h.Token.Reveal() == c.Password.Reveal() {
			return Errorf("%s: the MCP token must differ from the Proxmox token secret and password: clients would hold the Proxmox credential", h.TokenFrom)
		}
	}
	if h.Token.Empty() && !h.AllowUnauth {
		switch {
		case !loopback:
			return Errorf("MCP_HTTP_ADDR (--http) %s is not a loopback address and no MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE is set: refusing to serve Proxmox to the network without authentication (use --allow-unauthenticated-remote only if a proxy in front authenticates every request)", h.Addr)
		case !c.Demo:
			return Errorf("MCP_HTTP_ADDR (--http): serving a real cluster over HTTP needs MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE, even on loopback (any local user or process could drive it otherwise); for a local client without token support, use stdio")
		}
	}
	if h.AuthServer != "" {
		if h.Token.Empty() {
			return Errorf("MCP_AUTH_SERVER (--auth-server) needs MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE: metadata must not point clients to an authorization server when nothing checks tokens")
		}
		if h.PublicURL == "" {
			if !loopback {
				return Errorf("MCP_AUTH_SERVER (--auth-server) needs MCP_PUBLIC_URL (--public-url), the URL clients use to reach this server, when not bound to loopback")
			}
			h.PublicURL = "http://" + listen + h.Path
		}
	} else if h.PublicURL != "" {
		return Errorf("MCP_PUBLIC_URL (--public-url) is only used with MCP_AUTH_SERVER (--auth-server)")
	}
	return nil
}

// setTransport takes MCP_TRANSPORT (--transport). "http" is accepted for
// streamable-http because our own flag is --http.
func setTransport(c *Config, v string) error {
	switch t := strings.ToLower(strings.TrimSpace(v)); t {
	case TransportStdio, TransportStreamable, TransportSSE:
		c.HTTP.Transport = t
	case "http", "streamable_http", "streamablehttp":
		c.HTTP.Transport = TransportStreamable
	default:
		return fmt.Errorf("must be stdio, streamable-http or sse (got %s)", sanitize.Quote(v))
	}
	return nil
}

// resolveTransport settles the transport and the listen address from
// MCP_TRANSPORT, MCP_HTTP_ADDR and its two halves MCP_HOST and MCP_PORT:
//   - nothing set: stdio;
//   - an address only: streamable HTTP, as before MCP_TRANSPORT existed;
//   - an HTTP transport without an address: 127.0.0.1:8000, or MCP_HOST and
//     MCP_PORT;
//   - MCP_HTTP_ADDR and MCP_HOST/MCP_PORT must name the same address.
//
// An address with MCP_TRANSPORT=stdio, or MCP_HOST/MCP_PORT without an
// HTTP transport, is refused: one of the two is a mistake, and guessing
// would either ignore the address or open a port the user did not ask for.
func resolveTransport(h *HTTPConfig) error {
	defHost, defPort := DefaultHTTPHost, DefaultHTTPPort
	if h.imageAddr != "" {
		l, _, err := ParseListenAddr(h.imageAddr)
		if err != nil {
			return Errorf("MCP_IMAGE_HTTP_ADDR: %v", err)
		}
		defHost, defPort, _ = net.SplitHostPort(l)
	}
	parts := ""
	if h.host != "" || h.port != "" {
		host, port := h.host, h.port
		if host == "" {
			host = defHost
		}
		if port == "" {
			port = defPort
		}
		if !allDigitString(port) {
			return Errorf("MCP_PORT: must be a port number (got %s)", sanitize.Quote(port))
		}
		parts = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), port)
	}
	switch h.Transport {
	case "":
		if h.Addr == "" && parts != "" && h.imageAddr == "" {
			return Errorf("MCP_HOST/MCP_PORT are set but the transport is stdio: set MCP_TRANSPORT=streamable-http (or sse) to serve HTTP, or unset them")
		}
		if h.Addr != "" || parts != "" || h.imageAddr != "" {
			// An image that sets MCP_IMAGE_HTTP_ADDR serves HTTP unless
			// the deployment asks for stdio.
			h.Transport = TransportStreamable
		} else {
			h.Transport = TransportStdio
		}
	case TransportStdio:
		if h.Addr != "" || parts != "" {
			return Errorf("MCP_TRANSPORT (--transport) is stdio, but an HTTP address is set (MCP_HTTP_ADDR/--http, MCP_HOST or MCP_PORT): choose one transport")
		}
	}
	if h.Transport == TransportStdio {
		return nil
	}
	switch {
	case h.Addr == "" && parts == "":
		h.Addr = net.JoinHostPort(defHost, defPort)
	case h.Addr == "":
		if _, _, err := ParseListenAddr(parts); err != nil {
			return Errorf("MCP_HOST/MCP_PORT: %v", err)
		}
		h.Addr = parts
	case parts != "":
		a, _, errA := ParseListenAddr(h.Addr)
		b, _, errB := ParseListenAddr(parts)
		if errA == nil && errB == nil && a != b {
			return Errorf("MCP_HTTP_ADDR (--http) %s and MCP_HOST/MCP_PORT %s are the same setting with different values: set only one", h.Addr, parts)
		}
		if errB != nil {
			return Errorf("MCP_HOST/MCP_PORT: %v", errB)
		}
	}
	return nil
}

// ParseListenAddr turns PORT, HOST, HOST:PORT or :PORT into host:port and
// reports whether it is a loopback address. HOST must be an IP address or
// "localhost" (which means 127.0.0.1): a name that resolves elsewhere later
// would defeat the loopback decision made here. An empty host (":8000") or
// an unspecified address means every interface.
func ParseListenAddr(v string) (string, bool, error) {
	host, port := v, DefaultHTTPPort
	if allDigitString(v) {
		host, port = DefaultHTTPHost, v
	} else if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	}
	if !allDigitString(port) {
		return "", false, fmt.Errorf("%s: the port must be a number", sanitize.Quote(v))
	}
	if n, _ := strconv.Atoi(port); n > 65535 {
		return "", false, fmt.Errorf("%s: the port must be at most 65535", sanitize.Quote(v))
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if host == "" {
		return net.JoinHostPort("", port), false, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "", false, fmt.Errorf("%s: use an IP address (127.0.0.1, ::1, 0.0.0.0, a LAN address), \"localhost\" or just a port", sanitize.Quote(v))
	}
	return net.JoinHostPort(ip.String(), port), ip.IsLoopback(), nil
}

func allDigitString(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Defaults shown in --help.
const (
	defaultHTTPPath       = mcphttp.DefaultPath
	defaultSessionTimeout = "30m" // mcphttp.DefaultSessionTimeout
)

// setAuthToken takes MCP_AUTH_TOKEN; like the Proxmox secret it has no
// flag, because command lines are visible to every local user.
func setAuthToken(c *Config, v string) error {
	c.HTTP.Token, c.HTTP.TokenFrom = Secret{v}, "MCP_AUTH_TOKEN"
	return nil
}

func listSetter(dst func(c *Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*dst(c) = splitList(v)
		return nil
	}
}

func setSessionTimeout(c *Config, v string) error {
	d, err := parseDuration(v)
	if err != nil {
		return err
	}
	c.HTTP.SessionTimeout = d
	if d == 0 {
		c.HTTP.SessionTimeout = -1 // mcphttp: negative = never
	}
	return nil
}

// limitSetter takes a non-negative count where 0 means "no limit" (the
// mcphttp options spell that as negative; their zero is the default).
func limitSetter(dst func(c *Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("must be a whole number, 0 for no limit (got %s)", sanitize.Quote(v))
		}
		if n == 0 {
			n = -1
		}
		*dst(c) = n
		return nil
	}
}

func setShutdownTimeout(c *Config, v string) error {
	d, err := parseDuration(v)
	if err != nil || d == 0 {
		return errors.New("must be a positive duration with a unit, e.g. 20s")
	}
	c.HTTP.ShutdownTimeout = d
	return nil
}

// parseDuration accepts a Go duration with a unit, or "0".
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("must be a duration with a unit such as 30s, 30m or 2h, or 0 (got %s)", sanitize.Quote(v))
	}
	return d, nil
}

func urlSetter(dst func(c *Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("must be an absolute http(s) URL without credentials, query or fragment (got %s)", sanitize.Quote(v))
		}
		*dst(c) = v
		return nil
	}
}
