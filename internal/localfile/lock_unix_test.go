//go:build unix

package localfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTryLockExcludesAnotherOpen(t *testing.T) {
	t.Parallel()
	if !LockingSupported {
		t.Fatal("LockingSupported is false on a unix platform")
	}
	path := filepath.Join(t.TempDir(), "guest-100.lock")
	a, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := TryLock(a); err != nil || !ok {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	if ok, err := TryLock(b); err != nil || ok {
		t.Fatalf("second open locked the held file: %v, %v", ok, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); err != nil || !ok {
		t.Fatalf("lock after unlock: %v, %v", ok, err)
	}
}
