package routes

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Route is one (method, path pattern) pair the transport guard lets
// through. The pattern is compiled on the guard's first request that could
// match it, not at package init: a server answers initialize and
// tools/list without any upstream request, and the ~30 patterns were most
// of the library's start-up.
type Route struct {
	method string
	// prefix is the pattern's literal beginning: every path the pattern
	// matches starts with it, so a path that does not is refused by this
	// route without compiling its pattern (otherwise the first request
	// compiled every pattern listed before the one it matched: about 20
	// for the privilege check's /access/permissions).
	prefix string
	re     func() *regexp.Regexp
	// match, when set, replaces method and re: the gateway's routes
	// ([gatewayRoute]) match any method of a set and any well-formed path.
	match func(method string, segs []string) bool
	// query, when set, lists the only query parameters the route may
	// carry (destroy: never skiplock, never force).
	query []string
	// need, when set, is a query parameter the route requires, with the
	// pattern its one value must match whole (the restore's
	// extractconfig: a backup volume id).
	need      string
	needValue func() *regexp.Regexp
	// pastDeny lets this one literal route through although the deny list
	// covers its path: a dedicated operation with its own preconditions
	// (the destroy class's backup volume delete), never the gateway.
	pastDeny bool
}

func mkRoute(method, pattern string) Route {
	return Route{method: method, prefix: literalPrefix(pattern),
		re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + pattern + "$") })}
}

// literalPrefix returns the literal text pattern begins with: up to its
// first metacharacter, without the character before it when that one is
// made optional (*, ?, {). A pattern with an alternative outside every
// group has none. TestRoutePrefixes checks each route's against the
// compiled pattern's own LiteralPrefix.
func literalPrefix(pattern string) string {
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(pattern) && pattern[i] != ']'; i++ {
			}
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				return ""
			}
		}
	}
	i := strings.IndexAny(pattern, `\.+*?()|[]{}^$`)
	if i < 0 {
		return pattern
	}
	if i > 0 && strings.IndexByte("*?{", pattern[i]) >= 0 {
		i--
	}
	return pattern[:i]
}

// pastDenyList marks r as allowed before the deny list (see Route.pastDeny).
func pastDenyList(r Route) Route {
	r.pastDeny = true
	return r
}

// withQuery limits r to the query parameters named.
func withQuery(r Route, keys ...string) Route {
	r.query = keys
	return r
}

// withRequiredQuery limits r to the one query parameter key, which must
// be present once with a value matching pattern whole.
func withRequiredQuery(r Route, key, pattern string) Route {
	r.query = []string{key}
	r.need = key
	r.needValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + pattern + "$") })
	return r
}

// queryAllowed reports whether every parameter of the raw query is one the
// route allows (and the one it requires is there, well-formed). It parses
// the query only for a route that limits it.
func (r *Route) queryAllowed(rawQuery string) bool {
	if r.query == nil {
		return true
	}
	q, _ := url.ParseQuery(rawQuery) // as url.URL.Query does
	if r.need != "" && (len(q[r.need]) != 1 || !r.needValue().MatchString(q[r.need][0])) {
		return false
	}
	for k := range q {
		if !slices.Contains(r.query, k) {
			return false
		}
	}
	return true
}

// allows reports whether r lets method through on path (escaped, below
// the API base), whose unescaped segments are segs, with rawQuery.
func (r *Route) allows(method, path string, segs []string, rawQuery string) bool {
	if r.match != nil {
		return r.match(method, segs)
	}
	return r.method == method && strings.HasPrefix(path, r.prefix) && r.re().MatchString(path) && r.queryAllowed(rawQuery)
}
