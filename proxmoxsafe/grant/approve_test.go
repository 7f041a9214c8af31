package grant_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

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
	if g, err := store.Get(code); err != nil || g.Status != grant.Used || g.Operator != "alice" {
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

// TestGrantOtherTargetSameState: a grant approved for one guest does not
// approve the same action on another guest whose state looks the same
// (same name and status, so only the target differs); the approved grant
// still serves its own guest afterwards.
func TestGrantOtherTargetSameState(t *testing.T) {
	t.Parallel()
	cl := testCluster()
	cl.Guests = append(cl.Guests, &proxmoxtest.Guest{VMID: 107, Node: "pve1", Type: "qemu", Name: "web1", Status: "running", Uptime: 86400, CPUs: 2, MaxMem: 2 << 30})
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cl, func(c *proxmoxsafe.Config) {
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
	if g, err := store.Get(code); err != nil || g.Status != grant.Approved {
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
	var audit auditLines
	client := func() *proxmoxsafe.Client {
		store, err := grant.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: tokenSecret, Fingerprint: fake.Fingerprint(),
			Logger: slog.New(slog.DiscardHandler),
			Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower},
				Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}},
			Audit:     &audit,
			Approvers: []proxmoxsafe.Approver{store},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	_, err := client().GuestPower(t.Context(), in)
	var gr *grant.RequiredError
	if !errors.As(err, &gr) {
		t.Fatalf("first call: %v", err)
	}
	store, err := grant.Open(dir, nil)
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

// TestGrantBindsArguments: a grant approved for one argument set does not
// approve a call with another on the same target, action and effect
// parameters (the snapshot's description); the call it was asked for
// still uses it, once.
func TestGrantBindsArguments(t *testing.T) {
	t.Parallel()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, testCluster(), func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassSnapshot: {proxmoxsafe.LevelGrant}}
	})
	ask := func(desc string) (string, error) {
		_, err := e.client.SnapshotGuest(t.Context(), proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", Description: desc})
		var gr *grant.RequiredError
		if errors.As(err, &gr) {
			return gr.Grant.Code, err
		}
		return "", err
	}
	code, err := ask("before the upgrade")
	if code == "" {
		t.Fatalf("first call: %v", err)
	}
	g, err := store.Decide(code, true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpSnapshotGuest, proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre", Description: "before the upgrade"}); g.Arguments != want {
		t.Errorf("grant arguments %q, want %q", g.Arguments, want)
	}
	other, err := ask("something else")
	if other == "" || other == code {
		t.Fatalf("another description: code %q (approved %s), err %v", other, code, err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Fatalf("mutating requests after the refusal: %v", m)
	}
	if !strings.Contains(e.audit.String(), `"event":"refused"`) {
		t.Error("the refusal is not audited")
	}
	if c, err := ask("before the upgrade"); c != "" || err != nil {
		t.Fatalf("the approved call: code %q, %v", c, err)
	}
	if m := nonGET(e); len(m) != 1 {
		t.Fatalf("mutating requests = %v, want 1", m)
	}
}

// TestRefusalNamesTheStoresCommand: a refusal tells the operator the
// command that finds this store's directory (Options.Command), and plain
// "proxmox-safe-mcp approve" when none is set.
func TestRefusalNamesTheStoresCommand(t *testing.T) {
	t.Parallel()
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	for _, tc := range []struct{ command, want string }{
		{"", "(on the server host: proxmox-safe-mcp approve "},
		{"proxmox-safe-mcp --demo approve", "(on the server host: proxmox-safe-mcp --demo approve "},
	} {
		store, err := grant.Open(t.TempDir(), &grant.Options{Command: tc.command})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, testCluster(), approvedBy(store, proxmoxsafe.ClassPower))
		_, err = e.client.GuestPower(t.Context(), in)
		var gr *grant.RequiredError
		if !errors.As(err, &gr) || !strings.Contains(err.Error(), tc.want+gr.Grant.Code+")") {
			t.Errorf("Command %q: %v, want %q and the code", tc.command, err, tc.want)
		}
	}
}

// TestRefusalTimeHasItsZone: the refusal says until when the grant can be
// approved in the one format people read grant times in, with its zone.
func TestRefusalTimeHasItsZone(t *testing.T) {
	t.Parallel()
	e, _ := grantEnv(t, t.TempDir())
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
	var gr *grant.RequiredError
	if !errors.As(err, &gr) {
		t.Fatal(err)
	}
	if want := "before " + gr.Grant.Expires.UTC().Format(grant.TimeFormat) + ";"; !strings.Contains(err.Error(), want) || !strings.HasSuffix(grant.TimeFormat, " MST") {
		t.Errorf("%v\nwant %q", err, want)
	}
}

// demoEnv is an env over proxmoxtest's demo cluster (VM 103 on pve2:
// stopped, one 100G disk) whose destroy and config classes are approved
// only by grants kept in store.
func demoEnv(t *testing.T, fake *proxmoxtest.Server, store *grant.Store) *env {
	t.Helper()
	return envOn(t, fake, func(c *proxmoxsafe.Config) {
		c.TokenID, c.TokenSecret = proxmoxtest.DefaultTokenID, proxmoxtest.DefaultTokenSecret
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassDestroy, proxmoxsafe.ClassConfig}}
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelGrant}, proxmoxsafe.ClassConfig: {proxmoxsafe.LevelGrant}}
	})
}

// TestGrantBindsWhatWasShown: the operator approves a grant for what its
// plan shows; something changes before the model repeats the call. A
// change of what approving does (a 2T disk attached to the guest a
// destroy deletes, a disk grown from 100G to 500G before a resize) gets a
// new code, a refusal that names the approved grant and what differs,
// and no mutating request; a change elsewhere (another guest renamed)
// leaves the approval in force, and the call sends its one request.
func TestGrantBindsWhatWasShown(t *testing.T) {
	t.Parallel()
	destroy := func(e *env) error {
		_, err := e.client.DestroyGuest(t.Context(), proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, DestroyUnreferencedDisks: true})
		return err
	}
	resize := func(e *env) error {
		_, err := e.client.ResizeDisk(t.Context(), proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Disk: "scsi0", Size: "+10G"})
		return err
	}
	for _, tc := range []struct {
		name    string
		call    func(e *env) error
		shown   string // in the approved grant's effect
		change  func(fake *proxmoxtest.Server)
		changed string // in the refusal; "" = the approval still applies
	}{
		{"destroy, a 2T disk attached", destroy, "scsi0 local-lvm:vm-103-disk-0 (100G)",
			func(f *proxmoxtest.Server) {
				changeGuest(f, 103, func(g *proxmoxtest.Guest) { g.Config = map[string]string{"scsi1": "local-lvm:vm-103-disk-1,size=2T"} })
			}, "(2T)"},
		{"destroy, another guest renamed", destroy, "scsi0 local-lvm:vm-103-disk-0 (100G)",
			func(f *proxmoxtest.Server) { changeGuest(f, 100, func(g *proxmoxtest.Guest) { g.Name = "renamed" }) }, ""},
		{"resize, the disk grown to 500G", resize, "from 100G to 110G",
			func(f *proxmoxtest.Server) { changeGuest(f, 103, func(g *proxmoxtest.Guest) { g.MaxDisk = 500 << 30 }) }, "from 500G to 510G"},
		{"resize, another guest renamed", resize, "from 100G to 110G",
			func(f *proxmoxtest.Server) { changeGuest(f, 100, func(g *proxmoxtest.Guest) { g.Name = "renamed" }) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := proxmoxtest.NewServer(nil)
			t.Cleanup(fake.Close)
			store := openStore(t, t.TempDir())
			e := demoEnv(t, fake, store)
			var gr *grant.RequiredError
			if err := tc.call(e); !errors.As(err, &gr) {
				t.Fatalf("first call: %v, want a grant refusal", err)
			}
			if !strings.Contains(gr.Grant.Effect, tc.shown) || gr.Grant.Cluster != e.client.Cluster() || gr.Grant.Risk == "" || !gr.Grant.Shows() {
				t.Fatalf("the grant shows %+v", gr.Grant)
			}
			code := gr.Grant.Code
			if _, err := store.Decide(code, true, "alice"); err != nil {
				t.Fatal(err)
			}
			tc.change(fake)
			err := tc.call(e)
			if tc.changed == "" {
				if err != nil {
					t.Fatalf("an unrelated change voided the approval: %v", err)
				}
				if n := len(fake.MutatingRequests()); n != 1 {
					t.Fatalf("%d mutating requests, want 1", n)
				}
				return
			}
			var again *grant.RequiredError
			if !errors.As(err, &again) {
				t.Fatalf("after the change: %v, want a new grant refusal", err)
			}
			if m := nonGET(e); len(m) != 0 {
				t.Fatalf("mutating requests after the refusal: %v", m)
			}
			if again.Grant.Code == code || again.Stale != code || !strings.Contains(again.Changed, "the effect") || !strings.Contains(again.Changed, tc.changed) ||
				!strings.Contains(err.Error(), "(grant "+code+" was approved for this call, but not for what it does now, so it was not used: ") {
				t.Errorf("refusal: %v (stale %q, changed %q)", err, again.Stale, again.Changed)
			}
			if !strings.Contains(again.Grant.Effect, tc.changed) {
				t.Errorf("the new grant shows %q, not the new effect", again.Grant.Effect)
			}
			if g, _ := store.Get(code); g.Status != grant.Approved {
				t.Errorf("the approved grant is %s, want it left unused", g.Status)
			}
		})
	}
}

// TestGrantOtherCluster: two servers with one grant directory (the
// default state directory of one user), one for "lab", one for "prod",
// both with power=grant and a pve1/qemu/100. The lab grant approved, the
// same call on prod is refused with a grant of its own and nothing sent
// to prod; lab's call runs. Each server's audit records name its cluster.
func TestGrantOtherCluster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lab, labStore := grantEnv(t, dir)
	prod, _ := grantEnv(t, dir)
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
	code := askGrant(t, lab, in)
	g, err := labStore.Get(code)
	if err != nil || g.Cluster != lab.client.Cluster() {
		t.Fatalf("the grant names cluster %+v, want lab's %+v (%v)", g.Cluster, lab.client.Cluster(), err)
	}
	if _, err := labStore.Decide(code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err = prod.client.GuestPower(t.Context(), in)
	var gr *grant.RequiredError
	if !errors.As(err, &gr) || gr.Grant.Code == code || gr.Stale != code || !strings.Contains(gr.Changed, "the cluster") {
		t.Fatalf("prod: %v, want a new grant naming the other cluster", err)
	}
	if m := nonGET(prod); len(m) != 0 {
		t.Fatalf("prod sent %v on lab's grant", m)
	}
	if !strings.Contains(err.Error(), prod.client.Cluster().String()) {
		t.Errorf("the refusal does not name prod's cluster: %v", err)
	}
	if _, err := lab.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("lab: %v", err)
	}
	if n := len(lab.fake.MutatingRequests()); n != 1 {
		t.Fatalf("lab sent %d mutating requests, want 1", n)
	}
	for _, e := range []*env{lab, prod} {
		want := `"cluster":"` + e.client.Cluster().String() + `"`
		for l := range strings.SplitSeq(strings.TrimSpace(e.audit.String()), "\n") {
			if !strings.Contains(l, want) {
				t.Errorf("audit record without %s: %s", want, l)
			}
		}
	}
}
