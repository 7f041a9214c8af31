package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

// cmdHealthcheck probes a running server's /healthz. It is handled before
// configuration parsing: a container HEALTHCHECK runs it with the service's
// environment, and it needs none of the Proxmox settings.
const cmdHealthcheck = "healthcheck"

// Defaults of the HTTP transport.
const (
	defaultHTTPHost = "127.0.0.1"
	defaultHTTPPort = "8000"
	// defaultShutdownTimeout is how long SIGTERM waits for calls in flight.
	// It stays below Docker's and systemd's kill timeouts as configured in
	// docker-compose.yml (30s) and the unit (TimeoutStopSec=30).
	defaultShutdownTimeout = 20 * time.Second
	// userStatic is the identity of the MCP_AUTH_TOKEN holder; sessions
	// are bound to it.
	userStatic = "mcp-auth-token"
)

// Transports (MCP_TRANSPORT).
const (
	transportStdio      = "stdio"
	transportStreamable = "streamable-http"
	transportSSE        = "sse"
)

// httpConfig is the HTTP transport's part of config. After checkHTTPConfig,
// Addr "" means stdio, else Transport says which HTTP transport.
type httpConfig struct {
	Transport  string // "" until checkHTTPConfig: stdio, or streamable-http when Addr is set
	Addr       string // as given
	host, port string // MCP_HOST, MCP_PORT: Addr in two parts
	// imageAddr is MCP_IMAGE_HTTP_ADDR: the lowest-priority default a
	// container image sets, so that a deployment's own transport and
	// address settings (ours or the aliases) override it without conflict.
	imageAddr       string
	listen          string // host:port to listen on, after defaults
	loopback        bool
	Path            string
	Token           secret
	tokenFrom       string
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
func checkHTTPConfig(c *config) error {
	h := &c.HTTP
	if c.Command != cmdServe {
		return nil
	}
	if err := resolveTransport(h); err != nil || h.Addr == "" {
		return err
	}
	listen, loopback, err := parseListenAddr(h.Addr)
	if err != nil {
		return cfgErr("MCP_HTTP_ADDR (--http): %v", err)
	}
	h.listen, h.loopback = listen, loopback
	if h.Path == "" {
		h.Path = mcphttp.DefaultPath
		if h.Transport == transportSSE {
			h.Path = mcphttp.DefaultSSEPath
		}
	}
	if h.Transport == transportSSE && h.Stateless {
		return cfgErr("MCP_STATELESS (--stateless) does not apply to MCP_TRANSPORT=sse: the legacy transport keeps a session per event stream")
	}
	if h.ShutdownTimeout == 0 {
		h.ShutdownTimeout = defaultShutdownTimeout
	}
	switch {
	case h.TokenFile != "" && !h.Token.empty():
		return cfgErr("set only one of MCP_AUTH_TOKEN and MCP_AUTH_TOKEN_FILE (--auth-token-file)")
	case h.TokenFile != "":
		const name = "MCP_AUTH_TOKEN_FILE (--auth-token-file)"
		tok, err := c.readSecretFile(name, h.TokenFile) // keyfile.go
		if err != nil {
			return cfgErr("%s: %v", name, err)
		}
		h.Token, h.tokenFrom = secret{tok}, name
	}
	if !h.Token.empty() {
		if err := mcphttp.CheckStaticToken(h.Token.reveal()); err != nil {
			return cfgErr("%s: %v", h.tokenFrom, err)
		}
		if h.Token.reveal() == c.TokenSecret.reveal() || h.Token.reveal() == c.Password.reveal() {
			return cfgErr("%s: the MCP token must differ from the Proxmox token secret and password: clients would hold the Proxmox credential", h.tokenFrom)
		}
	}
	if h.Token.empty() && !h.AllowUnauth {
		switch {
		case !loopback:
			return cfgErr("MCP_HTTP_ADDR (--http) %s is not a loopback address and no MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE is set: refusing to serve Proxmox to the network without authentication (use --allow-unauthenticated-remote only if a proxy in front authenticates every request)", h.Addr)
		case !c.Demo:
			return cfgErr("MCP_HTTP_ADDR (--http): serving a real cluster over HTTP needs MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE, even on loopback (any local user or process could drive it otherwise); for a local client without token support, use stdio")
		}
	}
	if h.AuthServer != "" {
		if h.Token.empty() {
			return cfgErr("MCP_AUTH_SERVER (--auth-server) needs MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE: metadata must not point clients to an authorization server when nothing checks tokens")
		}
		if h.PublicURL == "" {
			if !loopback {
				return cfgErr("MCP_AUTH_SERVER (--auth-server) needs MCP_PUBLIC_URL (--public-url), the URL clients use to reach this server, when not bound to loopback")
			}
			h.PublicURL = "http://" + listen + h.Path
		}
	} else if h.PublicURL != "" {
		return cfgErr("MCP_PUBLIC_URL (--public-url) is only used with MCP_AUTH_SERVER (--auth-server)")
	}
	return nil
}

// setTransport takes MCP_TRANSPORT (--transport). "http" is accepted for
// streamable-http because our own flag is --http.
func setTransport(c *config, v string) error {
	switch t := strings.ToLower(strings.TrimSpace(v)); t {
	case transportStdio, transportStreamable, transportSSE:
		c.HTTP.Transport = t
	case "http", "streamable_http", "streamablehttp":
		c.HTTP.Transport = transportStreamable
	default:
		return fmt.Errorf("must be stdio, streamable-http or sse (got %q)", v)
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
func resolveTransport(h *httpConfig) error {
	defHost, defPort := defaultHTTPHost, defaultHTTPPort
	if h.imageAddr != "" {
		l, _, err := parseListenAddr(h.imageAddr)
		if err != nil {
			return cfgErr("MCP_IMAGE_HTTP_ADDR: %v", err)
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
			return cfgErr("MCP_PORT: must be a port number (got %q)", port)
		}
		parts = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), port)
	}
	switch h.Transport {
	case "":
		if h.Addr == "" && parts != "" && h.imageAddr == "" {
			return cfgErr("MCP_HOST/MCP_PORT are set but the transport is stdio: set MCP_TRANSPORT=streamable-http (or sse) to serve HTTP, or unset them")
		}
		if h.Addr != "" || parts != "" || h.imageAddr != "" {
			// An image that sets MCP_IMAGE_HTTP_ADDR serves HTTP unless
			// the deployment asks for stdio.
			h.Transport = transportStreamable
		} else {
			h.Transport = transportStdio
		}
	case transportStdio:
		if h.Addr != "" || parts != "" {
			return cfgErr("MCP_TRANSPORT (--transport) is stdio, but an HTTP address is set (MCP_HTTP_ADDR/--http, MCP_HOST or MCP_PORT): choose one transport")
		}
	}
	if h.Transport == transportStdio {
		return nil
	}
	switch {
	case h.Addr == "" && parts == "":
		h.Addr = net.JoinHostPort(defHost, defPort)
	case h.Addr == "":
		if _, _, err := parseListenAddr(parts); err != nil {
			return cfgErr("MCP_HOST/MCP_PORT: %v", err)
		}
		h.Addr = parts
	case parts != "":
		a, _, errA := parseListenAddr(h.Addr)
		b, _, errB := parseListenAddr(parts)
		if errA == nil && errB == nil && a != b {
			return cfgErr("MCP_HTTP_ADDR (--http) %s and MCP_HOST/MCP_PORT %s are the same setting with different values: set only one", h.Addr, parts)
		}
		if errB != nil {
			return cfgErr("MCP_HOST/MCP_PORT: %v", errB)
		}
	}
	return nil
}

// parseListenAddr turns PORT, HOST, HOST:PORT or :PORT into host:port and
// reports whether it is a loopback address. HOST must be an IP address or
// "localhost" (which means 127.0.0.1): a name that resolves elsewhere later
// would defeat the loopback decision made here. An empty host (":8000") or
// an unspecified address means every interface.
func parseListenAddr(v string) (string, bool, error) {
	host, port := v, defaultHTTPPort
	if allDigitString(v) {
		host, port = defaultHTTPHost, v
	} else if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	}
	if !allDigitString(port) {
		return "", false, fmt.Errorf("%q: the port must be a number", v)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if host == "" {
		return net.JoinHostPort("", port), false, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "", false, fmt.Errorf("%q: use an IP address (127.0.0.1, ::1, 0.0.0.0, a LAN address), \"localhost\" or just a port", v)
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

// serveHTTP serves MCP over streamable HTTP (or the legacy HTTP+SSE
// transport) until ctx is cancelled (a
// signal), then shuts down gracefully: the listener closes at once, calls
// in flight get ShutdownTimeout to finish, then every session is closed.
func serveHTTP(ctx context.Context, a *app, cfg *config, warn *slog.Logger, stderr io.Writer) int {
	h := cfg.HTTP
	opts := &mcphttp.Options{
		Path:                       h.Path,
		AllowedOrigins:             h.AllowedOrigins,
		AllowedHosts:               h.AllowedHosts,
		Stateless:                  h.Stateless,
		SessionTimeout:             h.SessionTimeout,
		MaxSessionsPerIdentity:     h.MaxSessions,
		MaxInFlight:                h.MaxInFlight,
		AllowUnauthenticatedRemote: h.AllowUnauth,
		LegacySSE:                  h.Transport == transportSSE,
		Logger:                     a.log,
	}
	if !h.Token.empty() {
		v, err := mcphttp.StaticTokenVerifier(map[string]string{userStatic: h.Token.reveal()})
		if err != nil { // checkHTTPConfig checked the token already
			fmt.Fprintf(stderr, "proxmox-safe-mcp: %s: %v\n", h.tokenFrom, err)
			return exitUsage
		}
		opts.TokenVerifier = v
		if h.AuthServer != "" {
			opts.ResourceMetadata = &oauthex.ProtectedResourceMetadata{
				Resource:               h.PublicURL,
				AuthorizationServers:   []string{h.AuthServer},
				BearerMethodsSupported: []string{"header"},
				ResourceName:           "proxmox-safe-mcp",
			}
		}
	}
	ln, err := net.Listen("tcp", h.listen)
	if err != nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: MCP_HTTP_ADDR (--http): %v\n", err)
		return exitToolError
	}
	addr := ln.Addr().(*net.TCPAddr)
	if h.loopback && !addr.IP.IsLoopback() { // cannot happen; the decision above relies on it
		ln.Close()
		fmt.Fprintf(stderr, "proxmox-safe-mcp: MCP_HTTP_ADDR (--http): %s did not bind a loopback address\n", h.Addr)
		return exitUsage
	}
	// The approval page's default URL names the bound port (approvalpage.go).
	page, pageURL, err := approvalPage(cfg, addr.String(), a.log)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+err.Error())
		return exitUsage
	}
	if page != nil {
		opts.Pages, opts.PagesPath = page, page.Path()
		a.opts.ApprovalPageURL = pageURL
	}
	srv := mcpserver.New(a.client, a.opts)
	a.watchFirstList(srv) // starts the privilege check (doctor.go)
	handler, err := mcphttp.New(srv, opts)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+httpOptionError(err))
		return exitUsage
	}

	switch {
	case h.AllowUnauth && h.Token.empty():
		warn.Warn("--allow-unauthenticated-remote is set: HTTP requests are NOT authenticated here; a proxy in front must authenticate every request", slog.String("addr", addr.String()))
	case h.Token.empty():
		warn.Warn("HTTP without authentication (allowed only for --demo on loopback): every local user and process can use this server", slog.String("addr", addr.String()))
	case !addr.IP.IsLoopback():
		warn.Warn("serving plain HTTP on a non-loopback address: the bearer token crosses the network in clear text unless a TLS proxy sits in front", slog.String("addr", addr.String()))
	}
	if h.AllowUnauth && !h.Token.empty() {
		warn.Warn("--allow-unauthenticated-remote has no effect: MCP_AUTH_TOKEN is set and every request is authenticated")
	}

	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// No WriteTimeout: an event stream stays open for the session. No
		// ReadTimeout either: net/http would cancel a request's context when
		// it passes, cutting long tool calls and event streams; mcphttp
		// bounds the body read per request instead (BodyReadTimeout).
		ErrorLog: log.New(slogWriter{a.log}, "", 0),
		BaseContext: func(net.Listener) context.Context {
			// Requests must outlive the signal; Shutdown ends them.
			return context.WithoutCancel(ctx)
		},
	}
	endpoint := "http://" + addr.String() + h.Path
	a.log.Info("serving MCP over HTTP", slog.String("transport", h.Transport), slog.String("url", endpoint),
		slog.Bool("auth", !h.Token.empty()), slog.Bool("stateless", h.Stateless), slog.String("version", versionString()))
	if page != nil {
		a.log.Info("serving the operator's approval page", slog.String("url", pageURL))
	}
	if cfg.Demo {
		// The demo banner is for stdio; say where to connect instead.
		fmt.Fprintf(stderr, "proxmox-safe-mcp: demo mode: MCP %s at %s (health: http://%s%s)\n", h.Transport, endpoint, addr, mcphttp.HealthPath)
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		a.log.Error("HTTP server failed", slog.Any("error", err))
		return exitToolError
	case <-ctx.Done():
	}
	a.log.Info("signal received; shutting down", slog.Duration("timeout", h.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), h.ShutdownTimeout)
	defer cancel()
	handlerDone := make(chan error, 1)
	go func() { handlerDone <- handler.Shutdown(sctx) }()
	serr := hs.Shutdown(sctx)
	herr := <-handlerDone
	<-served
	if serr != nil || herr != nil {
		hs.Close()
		a.log.Warn("calls still running at the shutdown deadline were cut off", slog.Duration("timeout", h.ShutdownTimeout))
	}
	a.log.Info("stopped")
	return exitOK
}

// httpOptionError names the setting behind an mcphttp option error.
func httpOptionError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "mcphttp: ")
	switch {
	case strings.HasPrefix(msg, "allowed origin"):
		return "MCP_ALLOWED_ORIGINS (--allowed-origins): " + msg
	case strings.HasPrefix(msg, "allowed host"):
		return "MCP_ALLOWED_HOSTS (--allowed-hosts): " + msg
	case strings.HasPrefix(msg, "Path"):
		return "MCP_HTTP_PATH (--http-path): " + msg
	case strings.Contains(msg, "ResourceMetadata.Resource"):
		return "MCP_PUBLIC_URL (--public-url): " + msg
	case strings.Contains(msg, "authorization server"):
		return "MCP_AUTH_SERVER (--auth-server): " + msg
	}
	return "invalid HTTP configuration: " + msg
}

// slogWriter routes net/http's internal error log (TLS handshake noise,
// panics in handlers) to slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Warn("http server", slog.String("error", strings.TrimSpace(string(p))))
	return len(p), nil
}

// healthcheck implements "proxmox-safe-mcp healthcheck [--url URL]
// [--timeout D]": exit 0 when the URL answers 200 "ok", 1 otherwise. The
// default URL is /healthz on MCP_HTTP_ADDR, or on MCP_HOST/MCP_PORT, or on
// MCP_IMAGE_HTTP_ADDR (an unspecified host becomes 127.0.0.1), else on
// 127.0.0.1:8000. Distroless and scratch images have no
// curl, so the binary probes itself.
func healthcheck(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	target, timeout := "", 5*time.Second
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: unexpected argument %q\n", args[i])
			return exitUsage
		}
		if name == "help" || name == "h" {
			fmt.Fprintln(stdout, "usage: proxmox-safe-mcp healthcheck [--url http://127.0.0.1:8000/healthz] [--timeout 5s]")
			return exitOK
		}
		if !hasVal {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: --%s needs a value\n", name)
				return exitUsage
			}
			i++
			val = args[i]
		}
		switch name {
		case "url":
			target = val
		case "timeout":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: --timeout: %q is not a positive duration\n", val)
				return exitUsage
			}
			timeout = d
		default:
			fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: unknown flag --%s (known: --url, --timeout)\n", name)
			return exitUsage
		}
	}
	if target == "" {
		hostport := net.JoinHostPort(defaultHTTPHost, defaultHTTPPort)
		get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
		addr, from := get("MCP_HTTP_ADDR"), "MCP_HTTP_ADDR"
		defHost, defPort := defaultHTTPHost, defaultHTTPPort
		if img := get("MCP_IMAGE_HTTP_ADDR"); img != "" {
			if l, _, err := parseListenAddr(img); err == nil {
				defHost, defPort, _ = net.SplitHostPort(l)
			}
			if addr == "" {
				addr, from = img, "MCP_IMAGE_HTTP_ADDR"
			}
		}
		if host, port := get("MCP_HOST"), get("MCP_PORT"); get("MCP_HTTP_ADDR") == "" && (host != "" || port != "") {
			// The aliases' halves (MCP_HOST, MCP_PORT), with the same
			// defaults as serve uses.
			addr, from = net.JoinHostPort(cmp.Or(strings.Trim(host, "[]"), defHost), cmp.Or(port, defPort)), "MCP_HOST/MCP_PORT"
		}
		if addr != "" {
			l, _, err := parseListenAddr(addr)
			if err != nil {
				fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: %s: %v\n", from, err)
				return exitUsage
			}
			h, p, _ := net.SplitHostPort(l)
			if ip, err := netip.ParseAddr(h); h == "" || (err == nil && ip.IsUnspecified()) {
				h = defaultHTTPHost
			}
			hostport = net.JoinHostPort(h, p)
		}
		target = "http://" + hostport + mcphttp.HealthPath
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: --url %q must be an http(s) URL\n", target)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: %v\n", errors.Unwrap(err))
		return exitToolError
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: %s answered %d %q\n", u, resp.StatusCode, body)
		return exitToolError
	}
	fmt.Fprintln(stdout, "ok")
	return exitOK
}

// Defaults shown in --help.
const (
	defaultHTTPPath       = mcphttp.DefaultPath
	defaultSessionTimeout = "30m" // mcphttp.DefaultSessionTimeout
)

// setAuthToken takes MCP_AUTH_TOKEN; like the Proxmox secret it has no
// flag, because command lines are visible to every local user.
func setAuthToken(c *config, v string) error {
	c.HTTP.Token, c.HTTP.tokenFrom = secret{v}, "MCP_AUTH_TOKEN"
	return nil
}

func listSetter(dst func(c *config) *[]string) func(*config, string) error {
	return func(c *config, v string) error {
		*dst(c) = splitList(v)
		return nil
	}
}

func setSessionTimeout(c *config, v string) error {
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
func limitSetter(dst func(c *config) *int) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("must be a whole number, 0 for no limit (got %q)", v)
		}
		if n == 0 {
			n = -1
		}
		*dst(c) = n
		return nil
	}
}

func setShutdownTimeout(c *config, v string) error {
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
		return 0, fmt.Errorf("must be a duration with a unit such as 30s, 30m or 2h, or 0 (got %q)", v)
	}
	return d, nil
}

func urlSetter(dst func(c *config) *string) func(*config, string) error {
	return func(c *config, v string) error {
		v = strings.TrimSpace(v)
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("must be an absolute http(s) URL without credentials, query or fragment (got %q)", v)
		}
		*dst(c) = v
		return nil
	}
}
