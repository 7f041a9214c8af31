package routes

import (
	"slices"
	"testing"
)

// TestSegments: an escaped path splits into unescaped segments, and every
// way of hiding another path in one is refused with its reason.
func TestSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path string
		want []string
		why  string
	}{
		{"/version", []string{"version"}, ""},
		{"/nodes/pve1/tasks/UPID:a%21b/log", []string{"nodes", "pve1", "tasks", "UPID:a!b", "log"}, ""},
		{"/nodes/%zz", nil, "a segment that does not unescape"},
		{"/nodes//status", nil, "an empty segment"},
		{"/version/", nil, "an empty segment"},
		{"/nodes/../access", nil, "a dot segment"},
		{"/nodes/%2E%2E/access", nil, "a dot segment"},
		{"/nodes/pve1%2F..%2Faccess", nil, "an encoded slash or backslash"},
		{"/nodes/a%5Cb", nil, "an encoded slash or backslash"},
		{"version", nil, "no leading slash"},
		{"", nil, "no leading slash"},
	} {
		got, why := Segments(tc.path)
		if why != tc.why || !slices.Equal(got, tc.want) {
			t.Errorf("Segments(%q) = %q, %q; want %q, %q", tc.path, got, why, tc.want, tc.why)
		}
	}
}
