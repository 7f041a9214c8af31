//go:build unix

package keyfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOwnedByMe(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := OwnedByMe(p, st); err != nil {
		t.Errorf("own file: %v", err)
	}
	if !ModeBitsAreAccess {
		t.Error("on Unix the mode bits are access")
	}
}
