package mcphttp

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// originCheck holds the Origin and Host allowlists. They are checked on every
// method, before authentication: a browser page must get 403 whether or not
// it could guess a token, and go-sdk's own Host check covers loopback
// connections only.
type originCheck struct {
	origins map[string]bool
	hosts   []hostEntry
}

type hostEntry struct{ host, port string } // port "" = any

func newOriginCheck(origins, hosts []string) (*originCheck, error) {
	g := &originCheck{origins: map[string]bool{}}
	for _, o := range origins {
		n, ok := normalizeOrigin(strings.TrimSpace(o))
		if !ok {
			return nil, fmt.Errorf("mcphttp: allowed origin %q must be scheme://host[:port] with nothing after it (\"null\" and wildcards are never allowed)", o)
		}
		g.origins[n] = true
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		host, port := splitHost(h)
		if host == "" || strings.ContainsAny(h, "/@?#* \t,") || (port != "" && !allDigits(port)) {
			return nil, fmt.Errorf("mcphttp: allowed host %q must be a host name or IP address, optionally with :port", h)
		}
		g.hosts = append(g.hosts, hostEntry{host, port})
	}
	return g, nil
}

// wrap checks Origin, Sec-Fetch-Site and Host, answers CORS preflights
// for allowed origins (before authentication: a browser sends no
// credentials on a preflight), then calls next.
func (g *originCheck) wrap(h *Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin, hasOrigin := r.Header["Origin"]
		if hasOrigin {
			o := ""
			if len(origin) == 1 {
				o = origin[0]
			}
			if n, ok := normalizeOrigin(o); !ok || !(g.origins[n] || isBoundOrigin(r, n)) {
				h.reject(w, r, http.StatusForbidden, "origin not allowed", slog.String("origin", strings.Join(origin, ", ")))
				return
			}
		} else if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			// A browser request that carries no Origin (e.g. a plain GET
			// from an <img> tag) is still a cross-site request.
			h.reject(w, r, http.StatusForbidden, "cross-site request", slog.String("sec_fetch_site", site))
			return
		}
		if !g.hostAllowed(r) {
			h.reject(w, r, http.StatusForbidden, "host not allowed", slog.String("host", r.Host))
			return
		}
		if hasOrigin {
			if corsHeaders(w, r, origin[0]) {
				return // a preflight, answered
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isBoundOrigin reports whether origin n is the loopback address and port
// the connection arrived on (http://127.0.0.1:8000 for a server bound
// there). Only a page served from this very listener could carry it, and
// the only pages this handler can serve ([Options.Pages], the approval
// page) run no script (their Content-Security-Policy is default-src
// 'none'), so accepting it lets nothing in; DNS
// rebinding gives the attacker's host name, never this origin. The MCP
// conformance suite sends it as its "valid origin". A non-loopback bound
// address is not accepted by default: other hosts share it.
func isBoundOrigin(r *http.Request, n string) bool {
	ip, port, ok := localAddr(r)
	if !ok || !ip.IsLoopback() {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	bound, ok := normalizeOrigin(scheme + "://" + net.JoinHostPort(ip.String(), port))
	return ok && n == bound
}

// hostAllowed reports whether r.Host names this server: an allowlisted
// host, the IP address and port the connection arrived on, or "localhost"
// (or any loopback IP) with that port when it arrived on loopback. DNS
// rebinding works by making a browser send the attacker's host name to our
// address; that name is on none of these lists.
func (g *originCheck) hostAllowed(r *http.Request) bool {
	host, port := splitHost(r.Host)
	if host == "" {
		return false
	}
	if port == "" {
		port = "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	for _, e := range g.hosts {
		if e.host == host && (e.port == "" || e.port == port) {
			return true
		}
	}
	ip, lport, ok := localAddr(r)
	if !ok || port != lport {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap().WithZone("")
		return a == ip || (ip.IsLoopback() && a.IsLoopback())
	}
	return ip.IsLoopback() && host == "localhost"
}

// localAddr is the address the connection arrived on, which net/http puts
// in the request context. Requests built without a server (unit tests of
// the handler alone) have none and are treated as non-loopback.
func localAddr(r *http.Request) (netip.Addr, string, bool) {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return netip.Addr{}, "", false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, "", false
	}
	return ap.Addr().Unmap().WithZone(""), fmt.Sprint(ap.Port()), true
}

// splitHost lowercases a Host value and splits off the port; brackets and a
// trailing dot ("localhost.") are removed, so equivalent spellings compare
// equal.
func splitHost(hostport string) (host, port string) {
	hostport = strings.ToLower(hostport)
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	return strings.TrimSuffix(host, "."), port
}

// normalizeOrigin returns scheme://host[:port] in lower case with a default
// port removed, or false for anything that is not a plain origin: "null",
// a path, credentials, a query, a wildcard.
func normalizeOrigin(o string) (string, bool) {
	if o == "" || o == "null" || strings.Contains(o, "*") {
		return "", false
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := splitHost(u.Host)
	if host == "" || (port != "" && !allDigits(port)) {
		return "", false
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
