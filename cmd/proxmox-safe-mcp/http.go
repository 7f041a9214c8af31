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
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// cmdHealthcheck probes a running server's /healthz. It is handled before
// configuration parsing: a container HEALTHCHECK runs it with the service's
// environment, and it needs none of the Proxmox settings.
const cmdHealthcheck = "healthcheck"

// userStatic is the identity of the MCP_AUTH_TOKEN holder; sessions are
// bound to it.
const userStatic = "mcp-auth-token"

// serveHTTP serves MCP over streamable HTTP (or the legacy HTTP+SSE
// transport) until ctx is cancelled (a
// signal), then shuts down gracefully: the listener closes at once, calls
// in flight get ShutdownTimeout to finish, then every session is closed.
func serveHTTP(ctx context.Context, a *app, cfg *settings.Config, warn *slog.Logger, stderr io.Writer) int {
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
		LegacySSE:                  h.Transport == settings.TransportSSE,
		Logger:                     a.log,
	}
	if !h.Token.Empty() {
		v, err := mcphttp.StaticTokenVerifier(map[string]string{userStatic: h.Token.Reveal()})
		if err != nil { // checkHTTPConfig checked the token already
			fmt.Fprintf(stderr, "proxmox-safe-mcp: %s: %v\n", h.TokenFrom, err)
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
	ln, err := net.Listen("tcp", h.Listen)
	if err != nil {
		// A busy port or an address this host does not have: the
		// configuration names a listener that cannot be, exit 2 as for
		// any configuration error (documented with the exit codes).
		fmt.Fprintf(stderr, "proxmox-safe-mcp: MCP_HTTP_ADDR (--http): %v%s\n", err, listenHint(err))
		return exitUsage
	}
	addr := ln.Addr().(*net.TCPAddr)
	if h.Loopback && !addr.IP.IsLoopback() { // cannot happen; the decision above relies on it
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
	srv := a.server()
	a.watchFirstCall(srv) // starts the privilege check (doctor.go)
	a.instrument(srv)     // --metrics-addr (metrics.go)
	handler, err := mcphttp.New(srv, opts)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+settings.HTTPOptionError(err))
		return exitUsage
	}

	switch {
	case h.AllowUnauth && h.Token.Empty():
		warn.Warn("--allow-unauthenticated-remote is set: HTTP requests are NOT authenticated here; a proxy in front must authenticate every request", slog.String("addr", addr.String()))
	case h.Token.Empty():
		warn.Warn("HTTP without authentication (allowed only for --demo on loopback): every local user and process can use this server", slog.String("addr", addr.String()))
	case !addr.IP.IsLoopback():
		warn.Warn("serving plain HTTP on a non-loopback address: the bearer token crosses the network in clear text unless a TLS proxy sits in front", slog.String("addr", addr.String()))
	}
	if h.AllowUnauth && !h.Token.Empty() {
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
		slog.Bool("auth", !h.Token.Empty()), slog.Bool("stateless", h.Stateless), slog.String("version", versionString()))
	if page != nil {
		a.log.Info("serving the operator's approval page", slog.String("url", pageURL))
	}
	if cfg.Demo {
		// The demo banner is for stdio; say where to connect instead.
		fmt.Fprintf(stderr, "proxmox-safe-mcp: demo mode: MCP %s at %s (health: http://%s%s)\n", h.Transport, endpoint, addr, mcphttp.HealthPath)
		fmt.Fprintf(stderr, "proxmox-safe-mcp: connect Claude Code with: %s\n", claudeAddHTTP(h.Transport, endpoint, !h.Token.Empty()))
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

// claudeAddHTTP is the `claude mcp add` line for the server at endpoint;
// with a bearer token it names the header and where the token is, never
// the token itself.
func claudeAddHTTP(transport, endpoint string, token bool) string {
	kind := "http"
	if transport == "sse" {
		kind = "sse"
	}
	line := "claude mcp add --transport " + kind + " proxmox-safe-demo " + endpoint
	if token {
		line += ` --header "Authorization: Bearer $(cat YOUR_MCP_TOKEN_FILE)"`
	}
	return line
}

// slogWriter routes net/http's internal error log (TLS handshake noise,
// panics in handlers) to slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Warn("http server", slog.String("error", strings.TrimSpace(string(p))))
	return len(p), nil
}

// listenHint is what to do about a listen error the user can fix.
func listenHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return " (another process listens there: choose another port, or stop it)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return " (no interface of this host has that address)"
	}
	return ""
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
		hostport := net.JoinHostPort(settings.DefaultHTTPHost, settings.DefaultHTTPPort)
		get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
		addr, from := get("MCP_HTTP_ADDR"), "MCP_HTTP_ADDR"
		defHost, defPort := settings.DefaultHTTPHost, settings.DefaultHTTPPort
		if img := get("MCP_IMAGE_HTTP_ADDR"); img != "" {
			if l, _, err := settings.ParseListenAddr(img); err == nil {
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
			l, _, err := settings.ParseListenAddr(addr)
			if err != nil {
				fmt.Fprintf(stderr, "proxmox-safe-mcp healthcheck: %s: %v\n", from, err)
				return exitUsage
			}
			h, p, _ := net.SplitHostPort(l)
			if ip, err := netip.ParseAddr(h); h == "" || (err == nil && ip.IsUnspecified()) {
				h = settings.DefaultHTTPHost
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
