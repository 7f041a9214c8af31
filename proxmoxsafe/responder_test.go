package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// responderCluster has one guest per guard of the responder operations.
func responderCluster() *proxmoxtest.Cluster {
	day := int64(86400)
	now := time.Now().Unix()
	history := func() []*proxmoxtest.Snapshot {
		return []*proxmoxtest.Snapshot{
			{Name: "keep-golden", SnapTime: now - 90*day},
			{Name: "old-manual", Parent: "keep-golden", SnapTime: now - 3*day},
			{Name: "auto1", Description: "cv4pve-autosnap", Parent: "old-manual", SnapTime: now - 7*3600},
			{Name: "auto2", Description: "cv4pve-autosnap", Parent: "auto1", SnapTime: now - 6*3600},
			{Name: "manual1", Parent: "auto2", SnapTime: now - 5*3600},
			{Name: "auto3", Description: "cv4pve-autosnap", Parent: "manual1", SnapTime: now - 4*3600},
		}
	}
	up := int64(7200)
	return &proxmoxtest.Cluster{
		Name:  "lab",
		Nodes: []*proxmoxtest.Node{{Name: "pve1", Online: true}, {Name: "pve2", Online: true}},
		Guests: []*proxmoxtest.Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web1.example.com", Status: "running", Uptime: up, AgentEnabled: true, Tags: []string{"web"}},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "db.example.com", Status: "running", Uptime: up, AgentEnabled: true, AgentHung: true, Snapshots: history()},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "cache", Status: "running", Uptime: up, AgentHung: true, AgentEnabled: true, Tags: []string{"Critical"}},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "app", Status: "stopped", Pool: "prod"},
			{VMID: 104, Node: "pve1", Type: "qemu", Name: "fresh", Status: "running", Uptime: 60, AgentEnabled: true, AgentHung: true},
			{VMID: 105, Node: "pve1", Type: "qemu", Name: "hung", Status: "running", Uptime: up, AgentEnabled: true, AgentHung: true},
			{VMID: 106, Node: "pve1", Type: "qemu", Name: "noagent", Status: "running", Uptime: up},
			{VMID: 107, Node: "pve1", Type: "qemu", Name: "off", Status: "stopped", Snapshots: history()},
			{VMID: 108, Node: "pve1", Type: "qemu", Name: "paused", Status: "running", Paused: true, Uptime: up, AgentEnabled: true},
			{VMID: 109, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true, Snapshots: history()},
			{VMID: 110, Node: "pve1", Type: "qemu", Name: "busy", Status: "running", Uptime: up, Lock: "backup", Snapshots: history()},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Uptime: up, Snapshots: history()},
			{VMID: 201, Node: "pve2", Type: "lxc", Name: "db", Status: "stopped"},
		},
		Tokens: map[string]*proxmoxtest.Token{
			"automation@pve!mcp": {Secret: canary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
		},
	}
}

// newResponderEnv: the responder class on pve1 and pve2, guests protected
// by short name "db", tag "critical" and pool "prod"; hung agents answer
// "not running" at once.
func newResponderEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(responderCluster())
	fake.AgentTimeout = time.Millisecond
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:   []string{"pve1", "pve2"},
			Classes:        []proxmoxsafe.Class{proxmoxsafe.ClassResponder},
			ProtectedNames: []string{"db"},
			ProtectedTags:  []string{"critical"},
			ProtectedPools: []string{"prod"},
		}
		if mod != nil {
			mod(c)
		}
	})
}

func guestTarget(node string, typ proxmoxsafe.GuestType, vmid int) proxmoxsafe.Target {
	return proxmoxsafe.Target{Node: node, Type: typ, VMID: vmid}
}

func guarded(vmid int, typ proxmoxsafe.GuestType, action string) proxmoxsafe.GuardedPowerInput {
	return proxmoxsafe.GuardedPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid},
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase(action, guestTarget("pve1", typ, vmid))},
	}
}

// auditSummary returns the (verified) audit log as "event op action
// vmid[/snap]" lines.
func auditSummary(t *testing.T, e *env) []string {
	t.Helper()
	if strings.TrimSpace(e.audit.String()) == "" {
		return nil
	}
	var out []string
	for _, r := range auditEvents(t, e) {
		s := string(r.Event) + " " + string(r.Op) + " " + r.Action + " " + itoa(r.VMID)
		if r.Snapshot != "" {
			s += "/" + r.Snapshot
		}
		out = append(out, s)
	}
	return out
}

// nonGET lists the requests that were not GETs, as "METHOD /path".
func nonGET(e *env) []string {
	return reqLines(e.fake.MutatingRequests())
}

// Every guard refuses with the right kind, says why, audits one refusal
// and sends no mutating request (the agent ping of a reset, a POST that
// changes nothing, is the only non-GET some of them send).
func TestResponderGuardsRefuse(t *testing.T) {
	t.Parallel()
	ping := func(vmid int) []string { return []string{"POST /nodes/pve1/qemu/" + itoa(vmid) + "/agent/ping"} }
	tests := []struct {
		name    string
		call    func(ctx context.Context, c *proxmoxsafe.Client) error
		kind    error
		mention string
		nonGET  []string // the ping, if the refusal comes after it
		noReq   bool     // refused before any request
	}{
		{name: "start protected by short name",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.StartGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "lxc", VMID: 201}, Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("start", guestTarget("pve2", "lxc", 201))}})
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: `its name "db" matches the protected name "db"`},
		{name: "reboot protected by full name's short form",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RebootGuest(ctx, guarded(101, "qemu", "reboot"))
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: `"db.example.com" matches the protected name "db"`},
		{name: "reset protected by tag in another case",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(102))
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: `protected tag "Critical"`},
		{name: "start protected by pool",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.StartGuest(ctx, guarded(103, "qemu", "start"))
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: `protected pool "prod"`},
		{name: "cleanup dry run of a protected guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.CleanupSnapshots(ctx, cleanupIn(101, "qemu", false))
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: "protected"},
		{name: "cleanup of a protected guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.CleanupSnapshots(ctx, cleanupIn(101, "qemu", true))
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: "protected"},
		{name: "start of a running guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.StartGuest(ctx, guarded(100, "qemu", "start"))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "already running"},
		{name: "reboot under the minimum uptime",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.RebootGuest(ctx, guarded(104, "qemu", "reboot"))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "up for 1m, less than the minimum uptime 1h"},
		{name: "reset under the minimum uptime",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(104))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "less than the minimum uptime"},
		{name: "reset with a live agent",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(100))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "answers a ping: the guest is alive", nonGET: ping(100)},
		{name: "reset without an agent",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(106))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "no guest agent configured", nonGET: ping(106)},
		{name: "reset of a stopped VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(107))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "not running"},
		{name: "reset of a paused VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResetGuest(ctx, resetIn(108))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "paused"},
		{name: "reset of a container",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := resetIn(200)
				in.Type = "lxc"
				_, err := c.ResetGuest(ctx, in)
				return err
			},
			kind: proxmoxsafe.ErrInvalidInput, mention: "type: must be one of: qemu", noReq: true},
		{name: "cleanup of a template",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.CleanupSnapshots(ctx, cleanupIn(109, "qemu", true))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "template"},
		{name: "cleanup of a locked guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.CleanupSnapshots(ctx, cleanupIn(110, "qemu", true))
				return err
			},
			kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "cleanup without the approval the operator requires",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := cleanupIn(107, "qemu", true)
				in.Approval = ""
				_, err := c.CleanupSnapshots(ctx, in)
				return err
			},
			kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE snapshot-cleanup pve1/qemu/107"},
		{name: "node not allowlisted",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := guarded(100, "qemu", "reboot")
				in.Node = "pve3"
				_, err := c.RebootGuest(ctx, in)
				return err
			},
			kind: proxmoxsafe.ErrNotAllowed, mention: "allowlist", noReq: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newResponderEnv(t, nil)
			err := tt.call(t.Context(), e.client)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.mention) || !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("err = %q, want it to mention %q and that no action was taken", err, tt.mention)
			}
			if got := nonGET(e); !slices.Equal(got, tt.nonGET) {
				t.Errorf("non-GET requests = %v, want %v", got, tt.nonGET)
			}
			if tt.noReq && len(e.requests()) != 0 {
				t.Errorf("requests = %v, want none", reqLines(e.requests()))
			}
			if ev := auditSummary(t, e); len(ev) != 1 || !strings.HasPrefix(ev[0], "refused ") {
				t.Errorf("audit = %v, want exactly one refused record", ev)
			}
		})
	}
}

// With approval level "none" for the class (the responder profile's
// default in the binary) the guarded tools need no phrase; the guards
// still refuse, and the audit names the level.
func TestResponderApprovalNone(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassResponder: {proxmoxsafe.LevelNone}}
	})
	ctx := t.Context()
	if _, err := e.client.StartGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 107}}); err != nil {
		t.Fatalf("start without a phrase at level none: %v", err)
	}
	if _, err := e.client.RebootGuest(ctx, proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 104}}); !errors.Is(err, proxmoxsafe.ErrPrecondition) {
		t.Errorf("the uptime guard at level none: %v", err)
	}
	res, err := e.client.CleanupSnapshots(ctx, proxmoxsafe.CleanupSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Apply: true})
	if err != nil || res.Deleted != 1 {
		t.Fatalf("cleanup at level none: %v %+v", err, res)
	}
	for _, r := range auditEvents(t, e) {
		if (r.Event == proxmoxsafe.AuditApproved || r.Event == proxmoxsafe.AuditSubmitted) && r.Approver != "none" {
			t.Errorf("%s %s %s: approver %q, want none", r.Event, r.Op, r.Snapshot, r.Approver)
		}
	}
}

// The responder's tools plan too: a reset plan pings the agent (a POST
// that changes nothing) and sends nothing else.
func TestResponderPlan(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, nil)
	in := resetIn(105)
	in.Plan, in.Approval = true, ""
	r, err := e.client.ResetGuest(t.Context(), in)
	if err != nil || r.Plan == nil || r.UPID != "" || r.Plan.Path != "/nodes/pve1/qemu/105/status/reset" {
		t.Fatalf("reset plan = %+v, %v", r, err)
	}
	st := guarded(107, "qemu", "start")
	st.Plan = true
	if r, err := e.client.StartGuest(t.Context(), st); err != nil || r.Plan == nil || r.Plan.Approval != "APPROVE start pve1/qemu/107" {
		t.Errorf("start plan = %+v, %v", r, err)
	}
	if got := nonGET(e); !slices.Equal(got, []string{"POST /nodes/pve1/qemu/105/agent/ping"}) {
		t.Errorf("non-GET requests = %v", got)
	}
}
