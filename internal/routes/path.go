package routes

import (
	"net/url"
	"strconv"
	"strings"
)

// Bounds of a gateway path (the library's APIGetInput.Path and
// APIRequestInput.Path).
const (
	// MaxPathLen caps a path in bytes; the longest real API paths (a task
	// log with a token user's UPID) are under 200.
	MaxPathLen = 256
	// MaxSegments caps the number of segments; Proxmox's deepest paths
	// have 9.
	MaxSegments = 12
)

// SegmentByte[c] is true for the bytes a gateway path segment may hold:
// what Proxmox's own path parameters are made of (node and storage ids,
// VMIDs, UPIDs with ':' and a token user's '@' and '!', HA ids "vm:100",
// user ids "u@pve", pool and snapshot names). Everything else — '%' and
// '\', spaces, quotes, ';', '?', '#', control bytes and any non-ASCII byte
// (look-alike slashes and dots, BiDi controls) — is refused rather than
// escaped, so a caller cannot hide one path inside another.
var SegmentByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-_.:@!=,+~" {
		t[c] = true
	}
	return t
}()

// ParsePath checks a caller's API path and returns its segments,
// unescaped (the caller gives them unescaped: the gateway escapes each one
// before sending). It enforces the path rules of docs/SECURITY.md: a path
// relative to /api2/json starting with "/", no scheme, host, query or
// fragment, no percent-encoding (so no encoded dot, dot-dot or slash,
// however often encoded), no empty, "." or ".." segment, only the bytes of
// [SegmentByte], and the length bounds. When it does not, problem says
// what was wrong, as the end of a sentence that begins with "path".
func ParsePath(p string) (segs []string, problem string) {
	bad := func(why string) ([]string, string) { return nil, why }
	switch {
	case p == "":
		return bad("is empty; give an API path relative to /api2/json, e.g. /cluster/resources")
	case len(p) > MaxPathLen:
		return bad("is longer than " + strconv.Itoa(MaxPathLen) + " bytes")
	case strings.Contains(p, "://") || !strings.HasPrefix(p, "/") && strings.Contains(p, ":"):
		return bad("is a full URL; give only the API path relative to /api2/json (the server's address comes from the operator's configuration)")
	case !strings.HasPrefix(p, "/"):
		return bad("must start with \"/\" (an API path relative to /api2/json, e.g. /cluster/resources)")
	case strings.HasPrefix(p, "//"):
		return bad("starts with \"//\", which names a host; give only the API path relative to /api2/json")
	case p == "/api2" || strings.HasPrefix(p, "/api2/"):
		return bad("must be relative to /api2/json: leave out the /api2/json prefix")
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '?':
			return bad("contains a query string (\"?\"); pass parameters in params, not in the path")
		case c == '#':
			return bad("contains a fragment (\"#\"); give only the API path")
		case c == '\\':
			return bad("contains a backslash")
		case c == 0:
			return bad("contains a NUL byte")
		case c < 0x20 || c == 0x7f:
			return bad("contains a control character")
		case c >= 0x80:
			return bad("contains a non-ASCII character (API paths are plain ASCII; look-alike characters are refused)")
		case c == '%':
			return bad(percentProblem(p))
		case c != '/' && !SegmentByte[c]:
			return bad("contains " + quoteByte(c) + ", which no Proxmox API path segment holds (allowed: letters, digits and - _ . : @ ! = , + ~)")
		}
	}
	segs = strings.Split(p[1:], "/")
	if len(segs) > MaxSegments {
		return bad("has more than " + strconv.Itoa(MaxSegments) + " segments")
	}
	for _, s := range segs {
		switch {
		case s == "":
			return bad("has an empty segment (\"//\" or a trailing \"/\")")
		case strings.Trim(s, ".") == "":
			return bad("has a \".\" or \"..\" segment; give the path without dot segments")
		}
	}
	return segs, ""
}

// percentProblem names what a percent-encoded path hides, decoding up to
// three times (double encoding included), for a clearer refusal.
func percentProblem(p string) string {
	s := p
	for range 3 {
		d, err := url.PathUnescape(s)
		if err != nil || d == s {
			break
		}
		s = d
		switch {
		case strings.Contains(s[1:], "//") || strings.Count(s, "/") > strings.Count(p, "/"):
			return "contains an encoded slash; percent-encoding is not accepted: give each segment unencoded, the gateway escapes it"
		case hasDotSegment(s):
			return "contains an encoded \".\" or \"..\" segment; percent-encoding is not accepted: give each segment unencoded, the gateway escapes it"
		}
	}
	return "contains percent-encoding, which is not accepted: give each segment unencoded, the gateway escapes it"
}

func hasDotSegment(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		if seg != "" && strings.Trim(seg, ".") == "" {
			return true
		}
	}
	return false
}

func quoteByte(c byte) string {
	switch c {
	case ' ':
		return "a space"
	case '"':
		return "a double quote"
	}
	return "\"" + string(rune(c)) + "\""
}

// Canonical is the path as the approval phrase, the audit record and the
// result name it: "/" + the segments joined. Every segment [ParsePath]
// returns holds only [SegmentByte] bytes, so it reads unambiguously.
func Canonical(segs []string) string { return "/" + strings.Join(segs, "/") }
