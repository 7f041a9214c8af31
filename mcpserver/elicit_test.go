package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// elicitFixture is a server whose power class is approved by elicitation
// (then levels), with the fake and audit log to check what happened.
type elicitFixture struct {
	fake     *proxmoxtest.Server
	audit    *memAudit
	approver *ElicitApprover
	server   *mcp.Server
}

func newElicitFixture(t *testing.T, levels ...proxmoxsafe.ApprovalLevel) *elicitFixture {
	t.Helper()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	return elicitFixtureWith(t, fake, ap, levels...)
}

// elicitFixtureWith is newElicitFixture for a given fake and approver (a
// "restarted" server shares both with the one before).
func elicitFixtureWith(t *testing.T, fake *proxmoxtest.Server, ap *ElicitApprover, levels ...proxmoxsafe.ApprovalLevel) *elicitFixture {
	t.Helper()
	if len(levels) == 0 {
		levels = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit}
	}
	pol := defaultPolicy()
	pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: levels, proxmoxsafe.ClassSnapshot: levels}
	audit := newMemAudit()
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Policy: pol, Audit: audit,
		Approvers: []proxmoxsafe.Approver{ap}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitFixture{fake: fake, audit: audit, approver: ap, server: New(client, nil)}
}

// connectWith opens a session with the given client options (nil: a
// client without elicitation).
func (f *elicitFixture) connectWith(t *testing.T, pv string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "elicit-test", Version: "v0"}, opts).
		Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// answering is a client whose person answers every form with answer.
func answering(count *atomic.Int32, seen chan<- string, answer func(n int32) *mcp.ElicitResult) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		n := count.Add(1)
		if seen != nil {
			seen <- r.Params.Message
		}
		return answer(n), nil
	}}
}

func accept(confirm string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": confirm}}
}

var shutdown101 = map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": "shutdown"}

// lastAudit returns the last audit record.
func (f *elicitFixture) lastAudit(t *testing.T) proxmoxsafe.AuditRecord {
	t.Helper()
	recs := f.audit.records(t)
	if len(recs) == 0 {
		t.Fatal("no audit record")
	}
	return recs[len(recs)-1]
}

// TestElicitAnswers: the person's answer decides, on both protocol
// versions: the right VMID → exactly one mutating request, audited with
// approver "elicit"; decline, cancel or a wrong confirmation → none, and a
// refusal in the audit log that says why.
func TestElicitAnswers(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		for _, tc := range []struct {
			name   string
			answer *mcp.ElicitResult
			want   string // "" = approved; else the refusal reason
		}{
			{"accept", accept("101"), ""},
			{"accept with spaces", accept(" 101 "), ""},
			{"decline", &mcp.ElicitResult{Action: "decline"}, "the person declined"},
			{"cancel", &mcp.ElicitResult{Action: "cancel"}, "the person cancelled"},
			{"wrong confirmation", accept("102"), "typed confirmation does not match"},
			{"empty confirmation", accept(""), "typed confirmation does not match"},
			{"accept only", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": "yes"}}, "typed confirmation does not match"},
		} {
			t.Run(protoName(pv)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newElicitFixture(t)
				var asked atomic.Int32
				seen := make(chan string, 4)
				cs := f.connectWith(t, pv, answering(&asked, seen, func(int32) *mcp.ElicitResult { return tc.answer }))
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if asked.Load() != 1 {
					t.Fatalf("the person was asked %d times, want 1", asked.Load())
				}
				msg := <-seen
				for _, want := range []string{"Action: shutdown", "Target: pve1/qemu/101", "Current state: status running", "Effect: approving will", "Risk:"} {
					if !strings.Contains(msg, want) {
						t.Errorf("the form does not show %q:\n%s", want, msg)
					}
				}
				muts := len(f.fake.MutatingRequests())
				rec := f.lastAudit(t)
				if tc.want == "" {
					if res.IsError || muts != 1 {
						t.Fatalf("approved call: IsError=%v, %d mutating requests (want 1): %s", res.IsError, muts, mustJSON(t, res))
					}
					recs := f.audit.records(t)
					var approvedBy string
					for _, r := range recs {
						if r.Event == proxmoxsafe.AuditApproved {
							approvedBy = r.Approver
						}
					}
					if approvedBy != "elicit" {
						t.Errorf("approved record names approver %q, want elicit", approvedBy)
					}
					return
				}
				if !res.IsError || muts != 0 {
					t.Fatalf("refused call: IsError=%v, %d mutating requests (want 0): %s", res.IsError, muts, mustJSON(t, res))
				}
				if got := text(t, res); !strings.Contains(got, tc.want) || !strings.Contains(got, "no action was taken") {
					t.Errorf("refusal text %q does not say %q and that no action was taken", got, tc.want)
				}
				if rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, tc.want) {
					t.Errorf("last audit record %+v, want a refusal saying %q", rec, tc.want)
				}
			})
		}
	}
}

// TestElicitNoCapability: a client that cannot elicit is never sent an
// elicitation. With only "elicit" allowed it gets a refusal that names the
// levels; with "elicit,phrase" the phrase decides (the fallback the
// operator chose, never a weaker one).
func TestElicitNoCapability(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newElicitFixture(t)
			cs := f.connectWith(t, pv, nil)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101})
			if err != nil {
				t.Fatalf("CallTool: %v (an elicitation was sent to a client without the capability?)", err)
			}
			got := text(t, res)
			if !res.IsError || len(f.fake.MutatingRequests()) != 0 || !strings.Contains(got, "elicitation capability") {
				t.Fatalf("IsError=%v, %d mutating; text %q", res.IsError, len(f.fake.MutatingRequests()), got)
			}
			if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused {
				t.Errorf("not audited as a refusal: %+v", rec)
			}
			// Even the exact phrase does not help: the operator did not allow it.
			args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": "shutdown", "approval": "APPROVE shutdown pve1/qemu/101"}
			if res, _ := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: args}); !res.IsError || len(f.fake.MutatingRequests()) != 0 {
				t.Fatalf("the phrase approved a class that allows only elicit: %s", mustJSON(t, res))
			}

			fb := newElicitFixture(t, proxmoxsafe.LevelElicit, proxmoxsafe.LevelPhrase)
			cs = fb.connectWith(t, pv, nil)
			if res, _ := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101}); !res.IsError || !strings.Contains(text(t, res), "APPROVE shutdown pve1/qemu/101") {
				t.Fatalf("fallback to the phrase does not ask for it: %s", mustJSON(t, res))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: args})
			if err != nil || res.IsError || len(fb.fake.MutatingRequests()) != 1 {
				t.Fatalf("phrase fallback: %v %s; %d mutating", err, mustJSON(t, res), len(fb.fake.MutatingRequests()))
			}
			if rec := fb.audit.records(t); !hasApproved(rec, "phrase") {
				t.Errorf("the approval is not audited as level phrase: %+v", rec)
			}
		})
	}
}

func hasApproved(recs []proxmoxsafe.AuditRecord, approver string) bool {
	for _, r := range recs {
		if r.Event == proxmoxsafe.AuditApproved && r.Approver == approver {
			return true
		}
	}
	return false
}

// TestElicitStateChanged: the guest changes between the question and the
// answer. On 2026-07-28 the person is asked again with the new state (and
// here declines); on older versions the call is refused. Either way
// nothing is sent.
func TestElicitStateChanged(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newElicitFixture(t)
			var asked atomic.Int32
			seen := make(chan string, 4)
			cs := f.connectWith(t, pv, answering(&asked, seen, func(n int32) *mcp.ElicitResult {
				if n == 1 {
					f.fake.Update(func(c *proxmoxtest.Cluster) {
						for _, g := range c.Guests {
							if g.VMID == 101 {
								g.Name = "renamed-while-asking"
							}
						}
					})
					return accept("101")
				}
				return &mcp.ElicitResult{Action: "decline"}
			}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError || len(f.fake.MutatingRequests()) != 0 {
				t.Fatalf("IsError=%v, %d mutating: %s", res.IsError, len(f.fake.MutatingRequests()), mustJSON(t, res))
			}
			<-seen
			if pv == "" {
				if asked.Load() != 2 {
					t.Fatalf("asked %d times, want a second question with the new state", asked.Load())
				}
				if msg := <-seen; !strings.Contains(msg, "renamed-while-asking") {
					t.Errorf("the second question does not show the new state:\n%s", msg)
				}
				if got := text(t, res); !strings.Contains(got, "declined") {
					t.Errorf("text %q", got)
				}
				return
			}
			if got := text(t, res); !strings.Contains(got, "state changed") {
				t.Errorf("text %q does not say the state changed", got)
			}
			if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, "state changed") {
				t.Errorf("audit %+v", rec)
			}
		})
	}
}

// firstState returns a sealed request state for shutdown101, asked over a
// 2026-07-28 session whose client does not retry by itself.
func (f *elicitFixture) firstState(t *testing.T) string {
	t.Helper()
	cs := f.connectWith(t, "", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the raw client was asked directly")
			return nil, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequestState == "" || res.InputRequests[elicitInputID] == nil {
		t.Fatalf("the first call asked for no input: %s", mustJSON(t, res))
	}
	return res.RequestState
}

// TestElicitForgedRetries: retries a client crafts itself, sent on both
// protocol versions: each is refused with zero mutating requests and a
// refusal in the audit log.
func TestElicitForgedRetries(t *testing.T) {
	t.Parallel()
	yes := mcp.InputResponseMap{elicitInputID: accept("101")}
	for _, pv := range protocols {
		for _, tc := range []struct {
			name  string
			retry func(t *testing.T, f *elicitFixture, state string) *mcp.CallToolParams
			want  string
		}{
			{"unsolicited: responses on a first call", func(_ *testing.T, _ *elicitFixture, _ string) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: yes}
			}, "unsolicited"},
			{"state that does not unseal", func(_ *testing.T, _ *elicitFixture, _ string) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: yes, RequestState: "bm90LWEtc3RhdGU"}
			}, "does not unseal"},
			{"tampered state", func(_ *testing.T, _ *elicitFixture, s string) *mcp.CallToolParams {
				b := []byte(s)
				i := len(b) / 2
				if b[i] == 'A' {
					b[i] = 'B'
				} else {
					b[i] = 'A'
				}
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: yes, RequestState: string(b)}
			}, "does not unseal"},
			{"changed arguments", func(_ *testing.T, _ *elicitFixture, s string) *mcp.CallToolParams {
				stop := map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": "stop"}
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: stop, InputResponses: yes, RequestState: s}
			}, "arguments differ"},
			{"other guest", func(_ *testing.T, _ *elicitFixture, s string) *mcp.CallToolParams {
				other := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: other, InputResponses: yes, RequestState: s}
			}, "arguments differ"},
			{"expired", func(_ *testing.T, f *elicitFixture, s string) *mcp.CallToolParams {
				f.approver.now = func() time.Time { return time.Now().Add(MaxElicitTTL + time.Second) }
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: yes, RequestState: s}
			}, "expired"},
			{"replayed after a decline", func(t *testing.T, f *elicitFixture, s string) *mcp.CallToolParams {
				cs := f.connectWith(t, "", &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
				no := mcp.InputResponseMap{elicitInputID: &mcp.ElicitResult{Action: "decline"}}
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: no, RequestState: s}); err != nil || !res.IsError {
					t.Fatalf("decline: %v %s", err, mustJSON(t, res))
				}
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: yes, RequestState: s}
			}, "already answered"},
			{"state without an answer", func(_ *testing.T, _ *elicitFixture, s string) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, RequestState: s}
			}, "no answer"},
		} {
			t.Run(protoName(pv)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newElicitFixture(t)
				state := f.firstState(t)
				params := tc.retry(t, f, state)
				var asked atomic.Int32
				cs := f.connectWith(t, pv, answering(&asked, nil, func(int32) *mcp.ElicitResult { return accept("101") }))
				if pv == "" {
					cs = f.connectWith(t, pv, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
				}
				res, err := cs.CallTool(t.Context(), params)
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if !res.IsError || len(f.fake.MutatingRequests()) != 0 || asked.Load() != 0 {
					t.Fatalf("IsError=%v, %d mutating, asked %d: %s", res.IsError, len(f.fake.MutatingRequests()), asked.Load(), mustJSON(t, res))
				}
				if got := text(t, res); !strings.Contains(got, tc.want) {
					t.Errorf("text %q does not say %q", got, tc.want)
				}
				if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, tc.want) {
					t.Errorf("audit %+v, want a refusal saying %q", rec, tc.want)
				}
			})
		}
	}
}

// TestElicitReplayAfterApproval: the state of an approved retry does not
// approve a second time.
func TestElicitReplayAfterApproval(t *testing.T) {
	t.Parallel()
	f := newElicitFixture(t)
	state := f.firstState(t)
	cs := f.connectWith(t, "", &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	p := &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101, InputResponses: mcp.InputResponseMap{elicitInputID: accept("101")}, RequestState: state}
	if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
		t.Fatalf("first answer: %v %s", err, mustJSON(t, res))
	}
	f.fake.Update(func(c *proxmoxtest.Cluster) {
		for _, g := range c.Guests {
			if g.VMID == 101 {
				// As if it came back up (started again through the HA
				// manager, so its HA state allows a shutdown), so only the
				// replay check can refuse.
				g.Status, g.HAState = "running", "started"
			}
		}
	})
	res, err := cs.CallTool(t.Context(), p)
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "already answered") {
		t.Fatalf("replay: %v %s", err, mustJSON(t, res))
	}
	if n := len(f.fake.MutatingRequests()); n != 1 {
		t.Fatalf("%d mutating requests, want 1", n)
	}
}

// TestElicitBindsArguments: the sealed state binds the digest of the
// library input (proxmoxsafe.ArgumentsDigest), the same one grants bind:
// a retry whose snapshot description differs (same action, target and
// effect parameters) is refused with zero mutating requests and audited;
// the same arguments plus wait (how the call waits, not what it does)
// are approved once.
func TestElicitBindsArguments(t *testing.T) {
	t.Parallel()
	f := newElicitFixture(t)
	raw := f.connectWith(t, "", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the raw client was asked directly")
			return nil, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	snap := func(desc string, extra map[string]any) map[string]any {
		m := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "before_upgrade", "description": desc}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	res, err := raw.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotGuest, Arguments: snap("first", nil)})
	if err != nil || res.RequestState == "" {
		t.Fatalf("first call: %v %s", err, mustJSON(t, res))
	}
	yes := mcp.InputResponseMap{elicitInputID: accept("100")}
	res, err = raw.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotGuest, Arguments: snap("other", nil), InputResponses: yes, RequestState: res.RequestState})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "arguments differ") || len(f.fake.MutatingRequests()) != 0 {
		t.Fatalf("another description: %v, %d mutating: %s", err, len(f.fake.MutatingRequests()), mustJSON(t, res))
	}
	if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, "arguments differ") {
		t.Errorf("audit %+v, want the refusal", rec)
	}
	res, err = raw.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotGuest, Arguments: snap("first", nil)})
	if err != nil || res.RequestState == "" {
		t.Fatalf("asking again: %v %s", err, mustJSON(t, res))
	}
	res, err = raw.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolSnapshotGuest, Arguments: snap("first", map[string]any{"wait": true, "timeout_seconds": 30}), InputResponses: yes, RequestState: res.RequestState})
	if err != nil || res.IsError || len(f.fake.MutatingRequests()) != 1 {
		t.Fatalf("same arguments plus wait: %v, %d mutating: %s", err, len(f.fake.MutatingRequests()), mustJSON(t, res))
	}
}
