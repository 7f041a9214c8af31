package routes

import (
	"net/url"
	"strings"
)

// Segments splits an escaped API path ("/nodes/pve1/status") into
// unescaped segments, on its own rather than trusting how the request was
// built: a segment that does not unescape, is empty, is made of dots or
// hides a "/" (an encoded slash, once unescaped) makes the path unusable,
// and why says so. A path must begin with "/".
func Segments(escaped string) (segs []string, why string) {
	if !strings.HasPrefix(escaped, "/") {
		return nil, "no leading slash"
	}
	for _, s := range strings.Split(escaped[1:], "/") {
		u, err := url.PathUnescape(s)
		switch {
		case err != nil:
			return nil, "a segment that does not unescape"
		case u == "":
			return nil, "an empty segment"
		case strings.Trim(u, ".") == "":
			return nil, "a dot segment"
		case strings.ContainsAny(u, "/\\"):
			return nil, "an encoded slash or backslash"
		}
		segs = append(segs, u)
	}
	return segs, ""
}
