package grant_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// TestUseNonce: a nonce is used once, also across a restart (a new store
// on the directory) and from several stores at once; it is forgotten
// only after it expired.
func TestUseNonce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() *grant.Store {
		s, err := grant.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	exp := time.Now().Add(5 * time.Minute)
	if ok, err := open().UseNonce("a", exp); !ok || err != nil {
		t.Fatalf("first use: %v %v", ok, err)
	}
	if ok, err := open().UseNonce("a", exp); ok || err != nil {
		t.Fatalf("second use after a restart: %v %v", ok, err)
	}
	var wg sync.WaitGroup
	var fresh atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, err := open().UseNonce("b", exp); err != nil {
				t.Error(err)
			} else if ok {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	if fresh.Load() != 1 {
		t.Fatalf("%d concurrent first uses succeeded, want 1", fresh.Load())
	}
	late := open()
	grant.SetClock(late, func() time.Time { return exp.Add(2 * time.Minute) })
	if ok, err := late.UseNonce("a", exp.Add(time.Hour)); !ok || err != nil {
		t.Errorf("a nonce long expired is forgotten: %v %v", ok, err)
	}
	if _, err := late.UseNonce("", exp); err == nil {
		t.Error("an empty nonce was accepted")
	}
}

// BenchmarkUseNonce: recording one answered elicitation in the grant
// directory (lock, read, atomic rewrite with fsync), in the steady state
// of a few live nonces: each one recorded here has expired long enough to
// be dropped by the next use. The file is rewritten whole, so the cost
// grows with the nonces alive at once (answers within 5 minutes).
func BenchmarkUseNonce(b *testing.B) {
	store, err := grant.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	exp := time.Now().Add(-2 * time.Minute)
	i := 0
	for b.Loop() {
		i++
		if ok, err := store.UseNonce(strconv.Itoa(i), exp); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestUseNonceDamagedFile: a nonce file that is not what the store wrote
// is an error naming it, never an empty record (which would re-open every
// answer it held).
func TestUseNonceDamagedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "used-nonces.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok, err := openStore(t, dir).UseNonce("a", time.Now().Add(time.Minute))
	if ok || err == nil || !strings.Contains(err.Error(), "used-nonces.json is damaged") {
		t.Fatalf("UseNonce over a damaged file: %v %v", ok, err)
	}
}
