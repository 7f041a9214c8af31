package mcpserver

import (
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Approval drift: a person approves what a form or a grant showed, then
// something changes before the approval is used. A change of what
// approving does is refused (and asked again) with zero mutating
// requests; a change elsewhere leaves the approval in force.

// driftFixture serves the admin profile over the demo cluster (VM 103 on
// pve2: stopped, one 100G disk) with destroy and config approved by
// levels, the elicitation approver and a grant store.
func driftFixture(t *testing.T, levels ...proxmoxsafe.ApprovalLevel) (*elicitFixture, *grant.Store) {
	t.Helper()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := proxmoxsafe.ProfileAdmin.Classes()
	if err != nil {
		t.Fatal(err)
	}
	audit := newMemAudit()
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Audit: audit, Logger: slog.New(slog.DiscardHandler),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: classes,
			Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: levels, proxmoxsafe.ClassConfig: levels}},
		Approvers: []proxmoxsafe.Approver{ap, grants},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitFixture{fake: fake, audit: audit, approver: ap, server: New(client, nil)}, grants
}

// grantCodeRE finds the code of the grant a refusal asks for (the first
// one it names).
var grantCodeRE = regexp.MustCompile(`approve grant ([0-9A-Z]{4}-[0-9A-Z]{4})`)

// driftCase is one change between an approval and its use.
type driftCase struct {
	name   string
	tool   string
	args   map[string]any
	shown  string // what the first form or grant shows
	change func(f *proxmoxtest.Server)
	now    string // what it shows after the change; "" = the approval still applies
}

var (
	destroy103 = map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "purge": false, "destroy_unreferenced_disks": true}
	resize103  = map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "disk": "scsi0", "size": "+10G"}
)

func driftCases() []driftCase {
	attach2T := func(f *proxmoxtest.Server) {
		f.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.Config = map[string]string{"scsi1": "local-lvm:vm-103-disk-1,size=2T"}
				}
			}
		})
	}
	grow500 := func(f *proxmoxtest.Server) {
		f.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.MaxDisk = 500 << 30
				}
			}
		})
	}
	renameOther := func(f *proxmoxtest.Server) {
		f.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 100 {
					g.Name = "renamed-meanwhile"
				}
			}
		})
	}
	return []driftCase{
		{"destroy, a 2T disk attached", ToolGuestDestroy, destroy103, "scsi0 local-lvm:vm-103-disk-0 (100G)", attach2T, "(2T)"},
		{"destroy, another guest renamed", ToolGuestDestroy, destroy103, "scsi0 local-lvm:vm-103-disk-0 (100G)", renameOther, ""},
		{"resize, the disk grown to 500G", ToolDiskResize, resize103, "from 100G to 110G", grow500, "from 500G to 510G"},
		{"resize, another guest renamed", ToolDiskResize, resize103, "from 100G to 110G", renameOther, ""},
	}
}

// TestElicitDrift: the person answers a form; between the form and the
// retry, the guest changes. On 2026-07-28 a change of what approving does
// asks again, showing what it does now (the person declines here); on
// older versions the retry is refused and audited. Either way nothing is
// sent. A change elsewhere: the answer approves, and the one request goes
// out.
func TestElicitDrift(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		for _, tc := range driftCases() {
			t.Run(protoName(pv)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f, _ := driftFixture(t, proxmoxsafe.LevelElicit)
				var asked atomic.Int32
				seen := make(chan string, 4)
				cs := f.connectWith(t, pv, answering(&asked, seen, func(n int32) *mcp.ElicitResult {
					if n == 1 {
						tc.change(f.fake)
						return accept("103")
					}
					return &mcp.ElicitResult{Action: "decline"}
				}))
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				first := <-seen
				for _, want := range []string{tc.shown, "Cluster: https://127.0.0.1:", "Risk: ", "Request: "} {
					if !strings.Contains(first, want) {
						t.Errorf("the form does not show %q:\n%s", want, first)
					}
				}
				muts := f.fake.MutatingRequests()
				if tc.now == "" {
					if res.IsError || len(muts) != 1 || asked.Load() != 1 {
						t.Fatalf("unrelated change: IsError=%v, %d mutating (want 1), asked %d: %s", res.IsError, len(muts), asked.Load(), text(t, res))
					}
					return
				}
				if !res.IsError || len(muts) != 0 {
					t.Fatalf("IsError=%v, mutating %v: %s", res.IsError, muts, text(t, res))
				}
				if pv == "" {
					if asked.Load() != 2 {
						t.Fatalf("asked %d times, want again with what approving does now", asked.Load())
					}
					if again := <-seen; !strings.Contains(again, tc.now) {
						t.Errorf("the second form does not show %q:\n%s", tc.now, again)
					}
					return
				}
				if got := text(t, res); asked.Load() != 1 || !strings.Contains(got, "what approving does changed since the person was asked") {
					t.Errorf("asked %d times; text %q", asked.Load(), got)
				}
				if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, "what approving does changed") {
					t.Errorf("audit %+v", rec)
				}
			})
		}
	}
}

// TestGrantDrift: the operator approves a grant (approve CODE shows the
// plan); the guest changes; the model repeats the call. A change of what
// approving does gets a new code and a refusal that names the approved
// grant and what differs, with no mutating request; a change elsewhere
// leaves the grant in force.
func TestGrantDrift(t *testing.T) {
	t.Parallel()
	for _, tc := range driftCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, store := driftFixture(t, proxmoxsafe.LevelGrant)
			cs := f.connectWith(t, "", nil)
			call := func() *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			res := call()
			m := grantCodeRE.FindStringSubmatch(text(t, res))
			if !res.IsError || m == nil {
				t.Fatalf("first call: %s", text(t, res))
			}
			g, err := store.Get(m[1])
			if err != nil || !strings.Contains(g.Effect, tc.shown) {
				t.Fatalf("grant %+v (%v), want it to show %q", g, err, tc.shown)
			}
			if _, err := store.Decide(g.Code, true, "alice"); err != nil {
				t.Fatal(err)
			}
			tc.change(f.fake)
			res = call()
			muts := f.fake.MutatingRequests()
			if tc.now == "" {
				if res.IsError || len(muts) != 1 {
					t.Fatalf("unrelated change: IsError=%v, %d mutating (want 1): %s", res.IsError, len(muts), text(t, res))
				}
				return
			}
			got := text(t, res)
			again := grantCodeRE.FindStringSubmatch(got)
			if !res.IsError || len(muts) != 0 || again == nil || again[1] == g.Code ||
				!strings.Contains(got, "grant "+g.Code+" was approved for this call, but not for what it does now") || !strings.Contains(got, tc.now) {
				t.Fatalf("after the change: IsError=%v, mutating %v: %s", res.IsError, muts, got)
			}
			if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused {
				t.Errorf("audit %+v", rec)
			}
		})
	}
}

// TestElicitOtherCluster: two servers share an elicitation key and its
// used nonces (replicas, or one user's default state directory), one for
// "lab", one for "prod", with the same guest. A form answered for lab,
// replayed to prod, is refused there with nothing sent: the sealed state
// names the cluster it was asked about.
func TestElicitOtherCluster(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			lab := newElicitFixture(t)
			prodFake := proxmoxtest.NewServer(nil)
			t.Cleanup(prodFake.Close)
			prod := elicitFixtureWith(t, prodFake, lab.approver)
			state := lab.firstState(t)
			cs := prod.connectWith(t, pv, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101,
				InputResponses: mcp.InputResponseMap{elicitInputID: accept("101")}, RequestState: state})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); !res.IsError || !strings.Contains(got, "asked about another cluster") || len(prodFake.MutatingRequests()) != 0 {
				t.Fatalf("prod: IsError=%v, mutating %v: %s", res.IsError, prodFake.MutatingRequests(), got)
			}
			if rec := prod.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, "another cluster") {
				t.Errorf("prod's audit %+v", rec)
			}
		})
	}
}
