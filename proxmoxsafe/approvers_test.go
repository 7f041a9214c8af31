package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// changeGuest changes guest vmid in the fake, as someone else would.
func changeGuest(fake *proxmoxtest.Server, vmid int, fn func(g *proxmoxtest.Guest)) {
	fake.Update(func(c *proxmoxtest.Cluster) {
		for _, g := range c.Guests {
			if g.VMID == vmid {
				fn(g)
			}
		}
	})
}

// TestSlowApprovalActsOnFreshState: an approver that takes long while the
// guest changes state must not act on the state it was shown. The pipeline
// reads the state again after the approval and refuses, naming the new
// state, with zero mutating requests.
func TestSlowApprovalActsOnFreshState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      func() (power *proxmoxsafe.GuestPowerInput, snap *proxmoxsafe.SnapshotGuestInput)
		change  func(g *proxmoxtest.Guest)
		mention []string
	}{
		{
			name: "stopped meanwhile",
			in: func() (*proxmoxsafe.GuestPowerInput, *proxmoxsafe.SnapshotGuestInput) {
				in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
				return &in, nil
			},
			change:  func(g *proxmoxtest.Guest) { g.Status = "stopped" },
			mention: []string{"changed while the approval was pending", "approved: running", "now: stopped"},
		},
		{
			name: "locked meanwhile",
			in: func() (*proxmoxsafe.GuestPowerInput, *proxmoxsafe.SnapshotGuestInput) {
				in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)
				return &in, nil
			},
			change:  func(g *proxmoxtest.Guest) { g.Lock = "backup" },
			mention: []string{"now: running, locked (backup)"},
		},
		{
			// Same state, but the precondition that reads more than the
			// state (the snapshot list) fails now.
			name: "snapshot name taken meanwhile",
			in: func() (*proxmoxsafe.GuestPowerInput, *proxmoxsafe.SnapshotGuestInput) {
				in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "s1"}
				in.Approval = in.ApprovalPhrase()
				return nil, &in
			},
			change: func(g *proxmoxtest.Guest) {
				g.Snapshots = append(g.Snapshots, &proxmoxtest.Snapshot{Name: "s1", SnapTime: 1700000000})
			},
			mention: []string{"already has a snapshot named s1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e *env
			slow := approverFunc(func(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
				// A person takes minutes; meanwhile the guest changes.
				changeGuest(e.fake, 100, tc.change)
				return proxmoxsafe.PhraseApprover{}.Approve(ctx, req)
			})
			e = newEnv(t, func(c *proxmoxsafe.Config) { useApprover(c, slow) })
			power, snap := tc.in()
			var err error
			if power != nil {
				_, err = e.client.GuestPower(t.Context(), *power)
			} else {
				_, err = e.client.SnapshotGuest(t.Context(), *snap)
			}
			if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "no action was taken") {
				t.Fatalf("err = %v, want a precondition refusal", err)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %v, want it to mention %q", err, m)
				}
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after the refusal: %v", reqLines(m))
			}
			audit := e.audit.String()
			if !strings.Contains(audit, `"event":"refused"`) || strings.Contains(audit, `"event":"approved"`) {
				t.Errorf("audit log:\n%s", audit)
			}
		})
	}
}

// unavailable is an approver that can never serve a request, like an
// elicitation approver whose client cannot elicit.
type unavailable struct{ name string }

func (u unavailable) Name() string { return u.name }
func (u unavailable) Approve(context.Context, proxmoxsafe.ApprovalRequest) error {
	return proxmoxsafe.ErrApproverUnavailable
}

func TestApproverCombinators(t *testing.T) {
	t.Parallel()
	req := proxmoxsafe.ApprovalRequest{Phrase: "APPROVE x", Given: "APPROVE x"}
	yes := proxmoxsafe.PhraseApprover{}
	no := approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error { return errors.New("no") })
	off := unavailable{"off"}
	ctx := t.Context()
	for _, tc := range []struct {
		a    proxmoxsafe.Approver
		name string
		ok   bool
		off  bool
	}{
		{proxmoxsafe.AllOf(yes, yes), "all(phrase,phrase)", true, false},
		{proxmoxsafe.AllOf(yes, no), "all(phrase,test)", false, false},
		{proxmoxsafe.AllOf(), "all()", false, false},
		{proxmoxsafe.AllOf(yes, off), "all(phrase,off)", false, true},
		{proxmoxsafe.FirstOf(off, yes), "first(off,phrase)", true, false},
		{proxmoxsafe.FirstOf(off, no, yes), "first(off,test,phrase)", false, false},
		{proxmoxsafe.FirstOf(off, off), "first(off,off)", false, true},
		{proxmoxsafe.FirstOf(proxmoxsafe.AllOf(off), yes), "first(all(off),phrase)", true, false},
	} {
		err := tc.a.Approve(ctx, req)
		if tc.a.Name() != tc.name || (err == nil) != tc.ok || errors.Is(err, proxmoxsafe.ErrApproverUnavailable) != tc.off {
			t.Errorf("%s: name %q, err %v; want ok=%v unavailable=%v", tc.name, tc.a.Name(), err, tc.ok, tc.off)
		}
	}
}
