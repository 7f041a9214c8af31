//go:build unix

package localfile

import (
	"os"
	"strings"
	"testing"
)

func TestCheckPrivateRefusesGroupWritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivate(dir, fi); err != nil {
		t.Fatalf("a 0700 directory of ours: %v", err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if fi, err = os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivate(dir, fi); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a 0770 directory: %v, want a refusal", err)
	}
}
