package routes

import (
	"regexp"
	"strings"
	"testing"
)

// patternRoutes is every route with a pattern: the login, the reads and
// each class's.
func patternRoutes() []Route {
	routes := append([]Route{loginRoute}, readRoutes...)
	for _, rs := range classRoutes {
		routes = append(routes, rs...)
	}
	return routes
}

// TestRoutePatternsCompile: the guard compiles its patterns on its first
// request (not at init, which a server that answers initialize and
// tools/list without any upstream request would pay for nothing), so a
// pattern that does not compile must be caught here rather than by a
// panic at a user's first request.
func TestRoutePatternsCompile(t *testing.T) {
	t.Parallel()
	for _, r := range patternRoutes() {
		if r.re() == nil {
			t.Errorf("%s route has no pattern", r.method)
		}
	}
}

// TestRoutePrefixes: the guard passes over a route whose literal prefix
// a path lacks without compiling its pattern (so a first request does not
// compile every pattern listed before the one it matches). That is sound
// only if every path the pattern matches starts with the prefix: each
// route's prefix must begin the compiled pattern's own LiteralPrefix
// ("a literal string that must begin any match"). Every route must have
// one, or the shortcut would buy nothing; and literalPrefix stops before
// an optional character and gives none for a top-level alternative.
func TestRoutePrefixes(t *testing.T) {
	t.Parallel()
	// LiteralPrefix of the pattern without the anchors the route adds:
	// the anchored form reports none when the pattern is not one-pass.
	literal := func(pattern string) string {
		lit, _ := regexp.MustCompile(pattern).LiteralPrefix()
		return lit
	}
	for _, r := range patternRoutes() {
		pattern := strings.TrimSuffix(strings.TrimPrefix(r.re().String(), "^"), "$")
		if lit := literal(pattern); !strings.HasPrefix(lit, r.prefix) {
			t.Errorf("route %s %s: prefix %q is not where every match begins (%q)", r.method, pattern, r.prefix, lit)
		}
		if r.prefix == "" {
			t.Errorf("route %s %s has no prefix", r.method, pattern)
		}
	}
	for pattern, want := range map[string]string{
		`/version`: "/version", `/ab*c`: "/a", `/ab?c`: "/a", `/ab{0,2}`: "/a", `/ab+`: "/ab",
		`/a(b|c)`: "/a", `a|b`: "", `/x(a)|b`: "", `/a[|]b`: "/a", `/a\|b`: "/a", `/a\.b`: "/a",
	} {
		if got := literalPrefix(pattern); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", pattern, got, want)
		}
		if lit := literal(pattern); !strings.HasPrefix(lit, literalPrefix(pattern)) {
			t.Errorf("literalPrefix(%q) = %q, not a prefix of the compiled %q", pattern, literalPrefix(pattern), lit)
		}
	}
}

// TestRouteAllows: method, pattern and query limits, each on its own.
func TestRouteAllows(t *testing.T) {
	t.Parallel()
	plain := mkRoute("POST", `/nodes/`+segNode+`/x`)
	limited := withQuery(mkRoute("GET", `/a`), "target")
	for _, tc := range []struct {
		name         string
		r            Route
		method, path string
		query        string
		want         bool
	}{
		{"match", plain, "POST", "/nodes/pve1/x", "", true},
		{"any query without a limit", plain, "POST", "/nodes/pve1/x", "force=1", true},
		{"other method", plain, "GET", "/nodes/pve1/x", "", false},
		{"other path", plain, "POST", "/nodes/pve1/y", "", false},
		{"no prefix", plain, "POST", "/cluster", "", false},
		{"pattern anchored at the end", plain, "POST", "/nodes/pve1/x/y", "", false},
		{"allowed query", limited, "GET", "/a", "target=pve2", true},
		{"no query", limited, "GET", "/a", "", true},
		{"another query", limited, "GET", "/a", "target=pve2&force=1", false},
		{"an unparsable query keeps its valid keys", limited, "GET", "/a", "target=%zz&x=1", false},
	} {
		if got := tc.r.allows(tc.method, tc.path, nil, tc.query); got != tc.want {
			t.Errorf("%s: allows(%s %s?%s) = %v, want %v", tc.name, tc.method, tc.path, tc.query, got, tc.want)
		}
	}
}
