package settings

import (
	"strings"
	"testing"
)

// TestReferenceCoversTable: every setting of the table is in the
// reference, with its names, a default and a meaning, and no cell breaks
// the Markdown table.
func TestReferenceCoversTable(t *testing.T) {
	t.Parallel()
	ref := Reference()
	if len(ref) != len(table) {
		t.Fatalf("%d reference rows for %d settings", len(ref), len(table))
	}
	for i, in := range ref {
		s := table[i]
		if in.Flag != s.flag || in.Env != s.env || in.Default == "" || in.Doc == "" {
			t.Errorf("row %d (%s%s): %+v", i, s.flag, s.env, in)
		}
		for _, cell := range []string{in.Default, in.Doc} {
			if strings.Contains(cell, "\n") || strings.Contains(strings.ReplaceAll(cell, `\|`, ""), "|") {
				t.Errorf("%s%s: cell %q would break the table", s.flag, s.env, cell)
			}
		}
	}
}
