package mcpserver

import (
	"strings"
	"testing"
)

// TestSummary: the first sentence of a description, not cut at "e.g."
// (the task_list row of the README table and `tools` ended at "(e.g.").
func TestSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"One. Two.", "One."},
		{"List tasks, one type's (e.g. qmstart, vzdump) or failed ones; paged. More.", "List tasks, one type's (e.g. qmstart, vzdump) or failed ones; paged."},
		{"Use i.e. this one. Then.", "Use i.e. this one."},
		{"No period", "No period"},
		{"Line one. x\nline two", "Line one."},
	} {
		if got := (ToolInfo{Description: tc.in}).Summary(); got != tc.want {
			t.Errorf("Summary(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, ti := range Tools(nil, nil) {
		s := ti.Summary()
		if strings.HasSuffix(s, "e.g.") || strings.HasSuffix(s, "i.e.") || !strings.HasSuffix(s, ".") {
			t.Errorf("%s: summary %q is cut off", ti.Name, s)
		}
	}
}
