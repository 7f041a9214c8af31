package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCallgrindTotal reads the whole run's instruction count from
// callgrind's output: its "summary:" line, or "totals:" where an older
// valgrind writes only that; a file with neither is an error, not zero.
func TestCallgrindTotal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       int64
		wantErr    bool
	}{
		{"summary", "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=main\n16 5\nsummary: 862755\n", 862755, false},
		{"totals", "events: Ir\nfn=main\n16 5\ntotals: 957054\n", 957054, false},
		{"none", "events: Ir\nfn=main\n16 5\n", 0, true},
	} {
		path := filepath.Join(dir, tc.name+".out")
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := callgrindTotal(path)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: callgrindTotal = %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := callgrindTotal(filepath.Join(dir, "missing.out")); err == nil {
		t.Error("a missing file gave no error")
	}
}
