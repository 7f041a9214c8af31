package routes

import (
	"slices"
	"strings"
	"testing"
)

// TestParsePath: a path the gateway accepts, and each rule a path can
// break, with the problem it is refused with.
func TestParsePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path    string
		segs    []string
		problem string // a part of the problem, "" for accepted
	}{
		{"/cluster/resources", []string{"cluster", "resources"}, ""},
		{"/pools/a,b+c=d~e", []string{"pools", "a,b+c=d~e"}, ""},
		{"", nil, "is empty"},
		{"/" + strings.Repeat("a", MaxPathLen), nil, "longer than 256 bytes"},
		{"https://x/api2/json/version", nil, "is a full URL"},
		{"x:y", nil, "is a full URL"},
		{"version", nil, `must start with "/"`},
		{"//x", nil, `starts with "//"`},
		{"/api2/json/version", nil, "leave out the /api2/json prefix"},
		{"/api2", nil, "leave out the /api2/json prefix"},
		{"/x?y", nil, "query string"},
		{"/x#y", nil, "fragment"},
		{`/x\y`, nil, "backslash"},
		{"/x\x00", nil, "NUL"},
		{"/x\x1b", nil, "control character"},
		{"/x\x7f", nil, "control character"},
		{"/x\u2215y", nil, "non-ASCII"},
		{"/x y", nil, "contains a space"},
		{`/x"y`, nil, "contains a double quote"},
		{"/x;y", nil, `contains ";"`},
		{"/nodes/%2e%2e/access", nil, `encoded "." or ".."`},
		{"/nodes/a%2Fb", nil, "encoded slash"},
		{"/nodes/%252e%252e/x", nil, `encoded "." or ".."`},
		{"/nodes/%41", nil, "contains percent-encoding"},
		{"/nodes/%zz", nil, "contains percent-encoding"},
		{"/" + strings.Repeat("a/", MaxSegments) + "a", nil, "more than 12 segments"},
		{"/a//b", nil, "empty segment"},
		{"/a/", nil, "empty segment"},
		{"/a/../b", nil, `"." or ".." segment`},
	} {
		segs, problem := ParsePath(tc.path)
		if tc.problem == "" {
			if problem != "" || !slices.Equal(segs, tc.segs) || Canonical(segs) != tc.path {
				t.Errorf("ParsePath(%q) = %q, %q; want %q", tc.path, segs, problem, tc.segs)
			}
			continue
		}
		if segs != nil || !strings.Contains(problem, tc.problem) {
			t.Errorf("ParsePath(%q) = %q, %q; want a problem with %q", tc.path, segs, problem, tc.problem)
		}
	}
}
