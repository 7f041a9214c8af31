package grant_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// TestGrantDenyAndExpiry: a denied or expired grant approves nothing and
// cannot be decided again.
func TestGrantDenyAndExpiry(t *testing.T) {
	t.Parallel()
	e, store := grantEnv(t, t.TempDir())
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if g, err := store.Decide(code, false, "bob"); err != nil || g.Status != grant.Denied {
		t.Fatalf("deny: %+v %v", g, err)
	}
	fresh := askGrant(t, e, in)
	if fresh == code {
		t.Fatal("a denied grant was offered again")
	}
	if _, err := store.Decide(fresh, true, "alice"); err != nil {
		t.Fatal(err)
	}
	grant.SetClock(store, func() time.Time { return time.Now().Add(grant.DefaultTTL + time.Second) })
	askGrant(t, e, in)
	if _, err := store.Decide(askGrant(t, e, in), true, "alice"); err != nil {
		t.Fatal(err) // a fresh grant under the moved clock is fine
	}
	third := askGrant(t, e, powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	grant.SetClock(store, func() time.Time { return time.Now().Add(2*grant.DefaultTTL + 2*time.Second) })
	if _, err := store.Decide(third, true, "alice"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("approving an expired grant: %v", err)
	}
	if n := len(e.fake.MutatingRequests()); n != 0 {
		t.Fatalf("%d mutating requests, want 0", n)
	}
}

// TestGrantSurvivesRestart: an approved grant is still approved after a
// restart (a new store on the same directory), and a used one stays used;
// the files are 0600 in a 0700 directory.
func TestGrantSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "grants")
	e, store := grantEnv(t, dir)
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if _, err := store.Decide(code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	e2, _ := grantEnv(t, dir) // "restarted" server, fresh fake
	if _, err := e2.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("after a restart the approved grant does not approve: %v", err)
	}
	e3, _ := grantEnv(t, dir)
	askGrant(t, e3, in)
	if n := len(e3.fake.MutatingRequests()); n != 0 {
		t.Fatalf("a used grant approved again after a restart: %d mutating requests", n)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("grant dir: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, code+".json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("grant file: %v %v", fi.Mode(), err)
	}
}

// TestGrantConcurrentUse: many stores on one directory (as several
// processes would) race to use one approved grant: exactly one wins.
func TestGrantConcurrentUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := grant.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := proxmoxsafe.ApprovalRequest{
		Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100},
		State: proxmoxsafe.GuestState{Status: "running", Name: "web1"}, Effect: "shut down VM 100",
	}
	var gr *grant.RequiredError
	if err := first.Approve(t.Context(), req); !errors.As(err, &gr) {
		t.Fatalf("first ask: %v", err)
	}
	if _, err := first.Decide(gr.Grant.Code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	approved := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := grant.Open(dir, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if s.Approve(context.Background(), req) == nil {
				mu.Lock()
				approved++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if approved != 1 {
		t.Fatalf("%d of %d concurrent retries approved, want exactly 1", approved, n)
	}
}

// TestGrantDirPrivate: a grant directory another local user could write
// (group or others) is refused, since whoever writes it approves; every
// file the store keeps (grants, the lock, used nonces) is 0600.
func TestGrantDirPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "grants")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := grant.Open(dir, nil); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a world-writable grant directory: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := grant.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := proxmoxsafe.ApprovalRequest{Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100}}
	if err := store.Approve(t.Context(), req); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Fatal(err)
	}
	if ok, err := store.UseNonce("n1", time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 3 {
		t.Fatalf("files %v, %v: want a grant, the lock and the nonces", entries, err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", e.Name(), fi.Mode(), err)
		}
	}
}
