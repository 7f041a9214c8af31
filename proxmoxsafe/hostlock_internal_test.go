//go:build unix

package proxmoxsafe

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLockGuest(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "locks") // created on first use
	a := &Client{lockDir: dir, log: slog.New(slog.DiscardHandler)}
	b := &Client{lockDir: dir, log: slog.New(slog.DiscardHandler)}
	unlockA, err := a.lockGuest(100)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("lock dir: %v, %v; want mode 0700", st, err)
	}
	// A second holder (another open of the file: another process, or
	// another Client here) is refused; another guest is not affected.
	if _, err := b.lockGuest(100); !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "another process on this host") {
		t.Fatalf("second lock: err = %v", err)
	}
	unlockOther, err := b.lockGuest(101)
	if err != nil {
		t.Fatalf("another guest: %v", err)
	}
	unlockOther()
	unlockA()
	unlockB, err := b.lockGuest(100)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	unlockB()
	// No lock dir: nothing on disk, never refused.
	none := &Client{}
	u1, err1 := none.lockGuest(100)
	u2, err2 := none.lockGuest(100)
	if err1 != nil || err2 != nil {
		t.Fatalf("without LockDir: %v, %v", err1, err2)
	}
	u1()
	u2()
}
