package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSkeleton: keys, nesting and JSON types stay; values are blanked
// except those of the keys the tests pick entries by.
func TestSkeleton(t *testing.T) {
	t.Parallel()
	var in any
	if err := json.Unmarshal([]byte(`{"data":[{"id":"qemu/100","vmid":100,"name":"web","type":"qemu",
		"status":"running","cpu":0.25,"template":true,"tags":["a"],"ha":{"managed":1,"state":"started"},"lock":null}]}`), &in); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"data": []any{map[string]any{
		"id": "qemu/100", "vmid": float64(100), "name": "web", "type": "qemu",
		"status": "", "cpu": 0, "template": false, "tags": []any{""},
		"ha": map[string]any{"managed": 0, "state": ""}, "lock": nil,
	}}}
	if got := skeleton("", in); !reflect.DeepEqual(got, want) {
		t.Errorf("skeleton = %#v\nwant %#v", got, want)
	}
}

// TestRecordingNames: the quoted recording names of a package's _test.go
// files, once each, sorted; other files and other strings are not names.
func TestRecordingNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a_test.go": `x := load("pve9/b.json"); y := load("pve7/a.json"); z := "pve9/b.json"`,
		"b_test.go": `load("pve8/c-d_e.json") // and "pve/x.json", "pve9/sub/dir.json"`,
		"c.go":      `load("pve9/not-a-test.json")`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := recordingNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pve7/a.json", "pve8/c-d_e.json", "pve9/b.json"}; !slices.Equal(got, want) {
		t.Errorf("recordingNames = %q, want %q", got, want)
	}
}
