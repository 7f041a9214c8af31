package proxmoxsafe_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// grantEnv is an env whose power class is approved only by grants kept in
// dir.
func grantEnv(t *testing.T, dir string) (*env, *proxmoxsafe.GrantStore) {
	t.Helper()
	store, err := proxmoxsafe.OpenGrantStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}
	})
	return e, store
}

// askGrant calls in and expects a grant refusal; it returns the code.
func askGrant(t *testing.T, e *env, in proxmoxsafe.GuestPowerInput) string {
	t.Helper()
	before := len(e.fake.MutatingRequests())
	_, err := e.client.GuestPower(t.Context(), in)
	var gr *proxmoxsafe.GrantRequiredError
	if !errors.As(err, &gr) || !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Fatalf("GuestPower: %v, want a grant refusal", err)
	}
	if n := len(e.fake.MutatingRequests()); n != before {
		t.Fatalf("a refused call sent %d mutating requests", n-before)
	}
	for _, want := range []string{gr.Grant.Code, "proxmox-safe-mcp approve " + gr.Grant.Code, "no action was taken", string(in.Action)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	return gr.Grant.Code
}

// TestGrantFlow: a refused call gets a code (the same one when repeated);
// the operator approves it; the repeated call runs once, audited with the
// level, the code and the operator; the next repeat needs a new grant.
func TestGrantFlow(t *testing.T) {
	t.Parallel()
	e, store := grantEnv(t, t.TempDir())
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if again := askGrant(t, e, in); again != code {
		t.Errorf("a repeated call got a new code %s, want the pending %s", again, code)
	}
	if !strings.Contains(e.audit.String(), `"event":"refused"`) {
		t.Error("the refusal is not audited")
	}
	if _, err := store.Decide(code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("approved call: %v", err)
	}
	if n := len(e.fake.MutatingRequests()); n != 1 {
		t.Fatalf("%d mutating requests, want 1", n)
	}
	for _, want := range []string{`"approver":"grant"`, `"grant":"` + code + `"`, `"operator":"alice"`} {
		if !strings.Contains(e.audit.String(), want) {
			t.Errorf("audit log lacks %s:\n%s", want, e.audit.String())
		}
	}
	// The guest now has a task running, so the pipeline would refuse a
	// repeat before asking; TestGrantSurvivesRestart repeats the call.
	if g, err := store.Get(code); err != nil || g.Status != proxmoxsafe.GrantUsed || g.Operator != "alice" {
		t.Errorf("after use: %+v %v", g, err)
	}
	if _, err := store.Decide(code, true, "alice"); err == nil || !strings.Contains(err.Error(), "used") {
		t.Errorf("approving a used grant: %v", err)
	}
}

// TestGrantBinding: a grant approves only the action, target and state it
// was asked for.
func TestGrantBinding(t *testing.T) {
	t.Parallel()
	e, store := grantEnv(t, t.TempDir())
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if _, err := store.Decide(code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	for name, other := range map[string]proxmoxsafe.GuestPowerInput{
		"other action": powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop),
		"other target": powerIn("pve1", "qemu", 102, proxmoxsafe.ActionStop),
	} {
		if c := askGrant(t, e, other); c == code {
			t.Errorf("%s: offered the approved code", name)
		}
	}
	changeGuest(e.fake, 100, func(g *proxmoxtest.Guest) { g.Name = "renamed" })
	if c := askGrant(t, e, in); c == code {
		t.Error("state changed: the approved grant was offered")
	}
	changeGuest(e.fake, 100, func(g *proxmoxtest.Guest) { g.Name = "web1" })
	if _, err := e.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("the grant no longer approves its own call: %v", err)
	}
}

// TestGrantDenyAndExpiry: a denied or expired grant approves nothing and
// cannot be decided again.
func TestGrantDenyAndExpiry(t *testing.T) {
	t.Parallel()
	e, store := grantEnv(t, t.TempDir())
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if g, err := store.Decide(code, false, "bob"); err != nil || g.Status != proxmoxsafe.GrantDenied {
		t.Fatalf("deny: %+v %v", g, err)
	}
	fresh := askGrant(t, e, in)
	if fresh == code {
		t.Fatal("a denied grant was offered again")
	}
	if _, err := store.Decide(fresh, true, "alice"); err != nil {
		t.Fatal(err)
	}
	proxmoxsafe.SetGrantClock(store, func() time.Time { return time.Now().Add(proxmoxsafe.DefaultGrantTTL + time.Second) })
	askGrant(t, e, in)
	if _, err := store.Decide(askGrant(t, e, in), true, "alice"); err != nil {
		t.Fatal(err) // a fresh grant under the moved clock is fine
	}
	third := askGrant(t, e, powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	proxmoxsafe.SetGrantClock(store, func() time.Time { return time.Now().Add(2*proxmoxsafe.DefaultGrantTTL + 2*time.Second) })
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
	first, err := proxmoxsafe.OpenGrantStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := proxmoxsafe.ApprovalRequest{
		Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100},
		State: proxmoxsafe.GuestState{Status: "running", Name: "web1"}, Effect: "shut down VM 100",
	}
	var gr *proxmoxsafe.GrantRequiredError
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
			s, err := proxmoxsafe.OpenGrantStore(dir, nil)
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
	if _, err := proxmoxsafe.OpenGrantStore(dir, nil); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a world-writable grant directory: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := proxmoxsafe.OpenGrantStore(dir, nil)
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

// TestUseNonce: a nonce is used once, also across a restart (a new store
// on the directory) and from several stores at once; it is forgotten
// only after it expired.
func TestUseNonce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() *proxmoxsafe.GrantStore {
		s, err := proxmoxsafe.OpenGrantStore(dir, nil)
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
	proxmoxsafe.SetGrantClock(late, func() time.Time { return exp.Add(2 * time.Minute) })
	if ok, err := late.UseNonce("a", exp.Add(time.Hour)); !ok || err != nil {
		t.Errorf("a nonce long expired is forgotten: %v %v", ok, err)
	}
	if _, err := late.UseNonce("", exp); err == nil {
		t.Error("an empty nonce was accepted")
	}
}

// TestGrantOtherTargetSameState: a grant approved for one guest does not
// approve the same action on another guest whose state looks the same
// (same name and status, so only the target differs); the approved grant
// still serves its own guest afterwards.
func TestGrantOtherTargetSameState(t *testing.T) {
	t.Parallel()
	cl := testCluster()
	cl.Guests = append(cl.Guests, &proxmoxtest.Guest{VMID: 107, Node: "pve1", Type: "qemu", Name: "web1", Status: "running", Uptime: 86400, CPUs: 2, MaxMem: 2 << 30})
	store, err := proxmoxsafe.OpenGrantStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, cl, func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}
	})
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, e, in)
	if _, err := store.Decide(code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	if other := askGrant(t, e, powerIn("pve1", "qemu", 107, proxmoxsafe.ActionShutdown)); other == code {
		t.Fatal("the grant for guest 100 was offered for guest 107")
	}
	if g, err := store.Get(code); err != nil || g.Status != proxmoxsafe.GrantApproved {
		t.Fatalf("the approved grant after a call for another guest: %+v %v", g, err)
	}
	if _, err := e.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("its own call: %v", err)
	}
	if m := nonGET(e); len(m) != 1 || !strings.Contains(m[0], "/qemu/100/") {
		t.Errorf("mutating requests %v, want the one shutdown of 100", m)
	}
}

// TestGrantConcurrentCalls: several servers (clients with no shared
// in-process lock, as separate processes would be) repeat the approved
// call at the same moment: the grant is used once, exactly one mutating
// request reaches Proxmox, and every other call is refused and audited.
func TestGrantConcurrentCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := proxmoxtest.NewServer(testCluster())
	t.Cleanup(fake.Close)
	var audit syncBuffer
	client := func() *proxmoxsafe.Client {
		store, err := proxmoxsafe.OpenGrantStore(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: canary, Fingerprint: fake.Fingerprint(),
			Logger: slog.New(slog.DiscardHandler),
			Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower},
				Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}},
			Audit:     proxmoxsafe.NewAuditLog(&audit, nil),
			Approvers: []proxmoxsafe.Approver{store},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	_, err := client().GuestPower(t.Context(), in)
	var gr *proxmoxsafe.GrantRequiredError
	if !errors.As(err, &gr) {
		t.Fatalf("first call: %v", err)
	}
	store, err := proxmoxsafe.OpenGrantStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Decide(gr.Grant.Code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	clients := make([]*proxmoxsafe.Client, n)
	for i := range clients {
		clients[i] = client()
	}
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GuestPower(context.Background(), in); err == nil {
				ok.Add(1)
			} else if errors.Is(err, proxmoxsafe.ErrApprovalRequired) || errors.Is(err, proxmoxsafe.ErrPrecondition) {
				refused.Add(1)
			} else {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var posts []string
	for _, r := range fake.MutatingRequests() {
		posts = append(posts, r.Method+" "+r.Path)
	}
	if ok.Load() != 1 || refused.Load() != n-1 || len(posts) != 1 {
		t.Fatalf("%d approved, %d refused, mutating requests %v; want exactly one", ok.Load(), refused.Load(), posts)
	}
	if got := strings.Count(audit.String(), `"event":"refused"`); got != n { // the first ask plus n-1
		t.Errorf("%d refusals audited, want %d", got, n)
	}
}
