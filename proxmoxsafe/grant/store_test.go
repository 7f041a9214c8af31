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
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
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
	e2, _ := grantEnvOn(t, e.fake, dir) // "restarted" server, same cluster
	if _, err := e2.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("after a restart the approved grant does not approve: %v", err)
	}
	e.fake.FinishTasks()
	changeGuest(e.fake, 100, func(g *proxmoxtest.Guest) { g.Status = "running" }) // up again, so only the used grant can refuse
	e3, _ := grantEnvOn(t, e.fake, dir)
	askGrant(t, e3, in)
	if n := len(e3.fake.MutatingRequests()); n != 1 {
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

// TestOpen: the TTL must be 1 minute to 24 hours (zero is the default),
// the directory must be named and be a directory.
func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ttl := range []time.Duration{time.Second, 25 * time.Hour, -time.Minute} {
		if _, err := grant.Open(dir, &grant.Options{TTL: ttl}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("TTL %s: %v", ttl, err)
		}
	}
	if _, err := grant.Open("", nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty directory: %v", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := grant.Open(file, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file: %v", err)
	}
	if _, err := grant.Open(filepath.Join(file, "sub"), nil); err == nil {
		t.Error("a directory under a file was opened")
	}
	store, err := grant.Open(dir, &grant.Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if g := ask(t, store, shutdownReq(100)); g.Expires.Sub(g.Created) != time.Hour {
		t.Errorf("a grant with TTL 1h lives %s", g.Expires.Sub(g.Created))
	}
	if store.Name() != string(proxmoxsafe.LevelGrant) {
		t.Errorf("Name = %q", store.Name())
	}
}

// TestList: List returns every grant newest first and forgets those
// expired more than a day ago.
func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := openStore(t, dir)
	start := time.Now()
	var codes []string
	for i, vmid := range []int{100, 101, 102} {
		grant.SetClock(store, func() time.Time { return start.Add(time.Duration(i) * time.Second) })
		codes = append(codes, ask(t, store, shutdownReq(vmid)).Code)
	}
	list, err := store.List()
	if err != nil || len(list) != 3 || list[0].Code != codes[2] || list[2].Code != codes[0] {
		t.Fatalf("List = %+v %v, want %v newest first", list, err, codes)
	}
	grant.SetClock(store, func() time.Time { return start.Add(grant.DefaultTTL + 24*time.Hour + 1500*time.Millisecond) })
	if list, err := store.List(); err != nil || len(list) != 1 || list[0].Code != codes[2] {
		t.Fatalf("after a day: %+v %v, want only the newest", list, err)
	}
	if _, err := os.Stat(filepath.Join(dir, codes[0]+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file of a grant expired for a day is kept: %v", err)
	}
}

// TestGetRefusals: a code of the wrong form, an unknown code and a
// damaged file are errors that say so; a damaged file also stops the
// store from approving (it cannot tell whether the file was a used
// grant).
func TestGetRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := openStore(t, dir)
	if _, err := store.Get("../etc/passwd"); err == nil || !strings.Contains(err.Error(), "is not a grant code") {
		t.Errorf("a path as code: %v", err)
	}
	if _, err := store.Get("K7QF-3MZD"); !errors.Is(err, grant.ErrNotFound) {
		t.Errorf("an unknown code: %v", err)
	}
	if _, err := store.Decide("K7QF-3MZD", true, "alice"); !errors.Is(err, grant.ErrNotFound) {
		t.Errorf("deciding an unknown code: %v", err)
	}
	g := ask(t, store, shutdownReq(100))
	if err := os.WriteFile(filepath.Join(dir, g.Code+".json"), []byte(`{"code":"OTHER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(g.Code); err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Errorf("a damaged file: %v", err)
	}
	err := store.Approve(t.Context(), shutdownReq(100))
	var re *proxmoxsafe.RefusalError
	if !errors.As(err, &re) || !errors.Is(err, proxmoxsafe.ErrApprovalRequired) || !strings.Contains(err.Error(), "the grant store could not be used") {
		t.Errorf("Approve with a damaged file: %v", err)
	}
}
