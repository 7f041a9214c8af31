package proxmoxtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestRecordedFactsMatchTests: testdata/pve-recorded.json (written by go
// generate, see facts.go) holds exactly the recordings this package's
// tests name, so a test that starts naming a recording, or a recording no
// test names any more, fails here with what to do instead of later with
// a missing file.
func TestRecordedFactsMatchTests(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "pve-recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts struct {
		Recordings map[string]json.RawMessage `json:"recordings"`
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	// The expression pvefacts uses to find the names.
	named := regexp.MustCompile(`"(pve[0-9]+/[A-Za-z0-9._-]+\.json)"`)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(want, m[1]) {
				want = append(want, m[1])
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no test names a recording")
	}
	for _, n := range want {
		if _, ok := facts.Recordings[n]; !ok {
			t.Errorf("%s is named by a test but not in testdata/pve-recorded.json: run go generate ./proxmoxsafe/proxmoxtest", n)
		}
	}
	for n := range facts.Recordings {
		if !slices.Contains(want, n) {
			t.Errorf("testdata/pve-recorded.json holds %s, which no test names: run go generate ./proxmoxsafe/proxmoxtest", n)
		}
	}
}
