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
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
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

func resetIn(vmid int) proxmoxsafe.ResetGuestInput {
	return proxmoxsafe.ResetGuestInput{
		Node:     "pve1",
		Type:     "qemu",
		VMID:     vmid,
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("reset", guestTarget("pve1", "qemu", vmid))},
	}
}

func cleanupIn(vmid int, typ proxmoxsafe.GuestType, apply bool) proxmoxsafe.CleanupSnapshotsInput {
	return proxmoxsafe.CleanupSnapshotsInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid},
		Apply:    apply,
		Approval: proxmoxsafe.ApprovalPhrase("snapshot-cleanup", guestTarget("pve1", typ, vmid)),
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
			kind: proxmoxsafe.ErrPrecondition, mention: "up for 1m0s, less than the minimum uptime 1h0m0s"},
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

// The protections apply to every mutation class, not only the responder's.
func TestProtectionsApplyToEveryClass(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot, proxmoxsafe.ClassSnapshotAdmin}
	})
	ctx := t.Context()
	_, err := e.client.GuestPower(ctx, proxmoxsafe.GuestPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101},
		Action:   "stop",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("stop", guestTarget("pve1", "qemu", 101))},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "protected") {
		t.Errorf("GuestPower of a name-protected guest: %v", err)
	}
	snapT := proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 102, Snapshot: "s1"}
	_, err = e.client.SnapshotGuest(ctx, proxmoxsafe.SnapshotGuestInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 102},
		Name:     "s1",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("snapshot", snapT)},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "tag") {
		t.Errorf("SnapshotGuest of a tag-protected guest: %v", err)
	}
	delT := proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101, Snapshot: "auto1"}
	_, err = e.client.DeleteSnapshot(ctx, proxmoxsafe.DeleteSnapshotInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101},
		Name:     "auto1",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("delsnapshot", delT)},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
		t.Errorf("DeleteSnapshot of a protected guest: %v", err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
	if n := len(auditSummary(t, e)); n != 3 {
		t.Errorf("audit records = %d, want 3 refusals", n)
	}
	// And GuestPower reboot has the uptime guard too.
	_, err = e.client.GuestPower(ctx, proxmoxsafe.GuestPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 104},
		Action:   "reboot",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("reboot", guestTarget("pve1", "qemu", 104))},
	})
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "minimum uptime") {
		t.Errorf("GuestPower reboot under the minimum uptime: %v", err)
	}
}

// Two reboots a second apart: the first goes through, the second meets
// the minimum uptime (the fake resets uptime on reboot).
func TestRebootLoopRefused(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, nil)
	ctx := t.Context()
	r, err := e.client.RebootGuest(ctx, guarded(100, "qemu", "reboot"))
	if err != nil {
		t.Fatalf("first reboot: %v", err)
	}
	if _, err := e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: r.UPID}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.RebootGuest(ctx, guarded(100, "qemu", "reboot"))
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "minimum uptime") {
		t.Fatalf("second reboot: %v", err)
	}
	if got := nonGET(e); !slices.Equal(got, []string{"POST /nodes/pve1/qemu/100/status/reboot"}) {
		t.Errorf("non-GET requests = %v", got)
	}
	// MinUptime < 0 turns the guard off; a custom one applies as set.
	off := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.MinUptime = -1 })
	if _, err := off.client.RebootGuest(ctx, guarded(104, "qemu", "reboot")); err != nil {
		t.Errorf("reboot with the guard off: %v", err)
	}
	short := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.MinUptime = 30 * time.Second })
	if _, err := short.client.RebootGuest(ctx, guarded(104, "qemu", "reboot")); err != nil {
		t.Errorf("reboot after 60s with a 30s minimum: %v", err)
	}
}

func TestResetGuest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("agent not running", func(t *testing.T) {
		t.Parallel()
		e := newResponderEnv(t, nil)
		r, err := e.client.ResetGuest(ctx, resetIn(105))
		if err != nil {
			t.Fatal(err)
		}
		if r.Task.Type != "qmreset" || r.Action != "reset" {
			t.Errorf("receipt = %+v", r)
		}
		want := []string{"POST /nodes/pve1/qemu/105/agent/ping", "POST /nodes/pve1/qemu/105/status/reset"}
		if got := nonGET(e); !slices.Equal(got, want) {
			t.Errorf("non-GET requests = %v, want %v", got, want)
		}
		if ev := auditSummary(t, e); !slices.Equal(ev, []string{"approved ResetGuest reset 105", "submitted ResetGuest reset 105"}) {
			t.Errorf("audit = %v", ev)
		}
	})
	t.Run("agent hangs past the timeout", func(t *testing.T) {
		t.Parallel()
		fake := proxmoxtest.NewUnstartedServer(responderCluster())
		fake.AgentTimeout = time.Hour // Proxmox would wait; we do not
		fake.StartTLS()
		e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
			c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
		})
		in := resetIn(105)
		in.AgentTimeout = 50 * time.Millisecond
		if _, err := e.client.ResetGuest(ctx, in); err != nil {
			t.Fatal(err)
		}
		if got := nonGET(e); len(got) != 2 || got[1] != "POST /nodes/pve1/qemu/105/status/reset" {
			t.Errorf("non-GET requests = %v", got)
		}
	})
	t.Run("no agent, operator allows it", func(t *testing.T) {
		t.Parallel()
		e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ResetWithoutAgent = true })
		if _, err := e.client.ResetGuest(ctx, resetIn(106)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("token cannot ping", func(t *testing.T) {
		t.Parallel()
		c := responderCluster()
		c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/": {"VM.Audit", "VM.PowerMgmt", "Sys.Audit"}}
		fake := proxmoxtest.NewServer(c)
		e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
			c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
		})
		_, err := e.client.ResetGuest(ctx, resetIn(105))
		if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "could not be established") || !strings.Contains(err.Error(), "VM.GuestAgent.Audit") {
			t.Errorf("err = %v", err)
		}
		if got := nonGET(e); len(got) != 1 {
			t.Errorf("non-GET requests = %v, want only the ping", got)
		}
	})
}

func TestStartGuest(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, nil)
	r, err := e.client.StartGuest(t.Context(), guarded(107, "qemu", "start"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Task.Type != "qmstart" {
		t.Errorf("task type %s", r.Task.Type)
	}
	// Without the responder class nothing guarded runs.
	p := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} })
	if _, err := p.client.StartGuest(t.Context(), guarded(107, "qemu", "start")); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), `"responder"`) {
		t.Errorf("start without the class: %v", err)
	}
	if len(p.requests()) != 0 {
		t.Errorf("requests without the class: %v", reqLines(p.requests()))
	}
}

func TestDeleteSnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshotAdmin} })
	in := func(name string) proxmoxsafe.DeleteSnapshotInput {
		return proxmoxsafe.DeleteSnapshotInput{
			GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200},
			Name:     name,
			Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("delsnapshot", proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: name})},
		}
	}
	if _, err := e.client.DeleteSnapshot(ctx, in("nope")); !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "no snapshot named nope") {
		t.Errorf("missing snapshot: %v", err)
	}
	if _, err := e.client.DeleteSnapshot(ctx, in("current")); !errors.Is(err, proxmoxsafe.ErrInvalidInput) { // refused before any request
		t.Errorf("the current pseudo-snapshot: %v", err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Fatalf("mutating requests after refusals: %v", m)
	}
	// It deletes what it is told to, keep marker or not.
	r, err := e.client.DeleteSnapshot(ctx, in("keep-golden"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Task.Type != "vzdelsnapshot" {
		t.Errorf("task type %s", r.Task.Type)
	}
	if got := nonGET(e); !slices.Equal(got, []string{"DELETE /nodes/pve1/lxc/200/snapshot/keep-golden"}) {
		t.Errorf("non-GET requests = %v", got)
	}
	// The responder class alone does not allow a direct deletion.
	r2 := newResponderEnv(t, nil)
	if _, err := r2.client.DeleteSnapshot(ctx, in("auto1")); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "snapshot-admin") {
		t.Errorf("delete with only the responder class: %v", err)
	}
}

func TestCleanupSnapshotsDryRun(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", false))
	if err != nil {
		t.Fatal(err)
	}
	// old-manual by age; then 5 remain (keep-golden, auto1, auto2, manual1,
	// auto3) for a maximum of 3: manual1 first, then the oldest automatic.
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Rule)+":"+string(s.Status))
	}
	want := []string{"old-manual:max-age:planned", "manual1:max-count:planned", "auto1:max-count:planned"}
	if !slices.Equal(steps, want) || res.Applied || res.Deleted != 0 {
		t.Errorf("steps = %v (applied %v, deleted %d), want %v", steps, res.Applied, res.Deleted, want)
	}
	if !strings.Contains(res.Message, "Dry run") || !strings.Contains(res.Message, "nothing was changed") {
		t.Errorf("message = %q", res.Message)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("a dry run sent %v", m)
	}
	if ev := auditSummary(t, e); len(ev) != 0 {
		t.Errorf("a dry run wrote audit records: %v", ev)
	}
}

// apply deletes one snapshot at a time, each only after the previous
// deletion's task was seen stopped, in the plan's order.
func TestCleanupSnapshotsApply(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", true))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 3 || !res.Applied {
		t.Fatalf("result = %+v", res)
	}
	g, _ := e.fake.Guest(200)
	var left []string
	for _, s := range g.Snapshots {
		left = append(left, s.Name)
	}
	if !slices.Equal(left, []string{"keep-golden", "auto2", "auto3"}) {
		t.Errorf("snapshots left = %v", left)
	}
	// Order: each DELETE comes after a task status read that saw the
	// previous deletion's task stopped.
	tasks := e.fake.Tasks()
	var deletes []string
	lastDelete := -1
	for i, r := range e.requests() {
		if r.Method != "DELETE" {
			continue
		}
		deletes = append(deletes, r.Path)
		if lastDelete >= 0 {
			prev := tasks[len(deletes)-2]
			sawStopped := false
			for _, q := range e.requests()[lastDelete:i] {
				if q.Method == "GET" && strings.Contains(q.RawPath, "/tasks/") && strings.HasSuffix(q.Path, "/status") && strings.Contains(q.Path, prev.UPID) {
					sawStopped = true
				}
			}
			if !sawStopped || prev.EndTime == 0 || prev.EndTime > tasks[len(deletes)-1].StartTime {
				t.Errorf("DELETE %s was sent before task %s was seen stopped", r.Path, prev.UPID)
			}
		}
		lastDelete = i
	}
	wantDel := []string{"/nodes/pve1/lxc/200/snapshot/old-manual", "/nodes/pve1/lxc/200/snapshot/manual1", "/nodes/pve1/lxc/200/snapshot/auto1"}
	if !slices.Equal(deletes, wantDel) {
		t.Errorf("DELETEs = %v, want %v", deletes, wantDel)
	}
	if got := nonGET(e); len(got) != 3 {
		t.Errorf("non-GET requests = %v, want only the three DELETEs", got)
	}
	var want []string
	for _, s := range []string{"old-manual", "manual1", "auto1"} {
		for _, ev := range []string{"approved", "submitted", "completed"} {
			want = append(want, ev+" CleanupSnapshots delsnapshot 200/"+s)
		}
	}
	if ev := auditSummary(t, e); !slices.Equal(ev, want) {
		t.Errorf("audit = %v\nwant %v", ev, want)
	}
}

// A failed deletion stops the run and the result says what was and was
// not deleted.
func TestCleanupSnapshotsStopsOnFailure(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// The first deletion succeeds (with a warning), the second fails
	// inside its task.
	e2 := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	e2.fake.FailNextTask("WARNINGS: 1")
	e2.fake.FailNextTask("zfs error: could not find any snapshots to destroy; check snapshot names.")
	res, err := e2.client.CleanupSnapshots(ctx, cleanupIn(200, "lxc", true))
	var te *proxmoxsafe.TaskError
	if !errors.As(err, &te) || !errors.Is(err, proxmoxsafe.ErrTaskFailed) {
		t.Fatalf("err = %v, want a *TaskError", err)
	}
	if res == nil {
		t.Fatal("no result after a failed deletion")
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Status))
	}
	if want := []string{"old-manual:deleted", "manual1:failed", "auto1:not_attempted"}; !slices.Equal(steps, want) {
		t.Errorf("steps = %v, want %v", steps, want)
	}
	if res.Deleted != 1 || !strings.Contains(res.Message, "Stopped after 1 deletion") || !strings.Contains(res.Message, "1 not attempted") {
		t.Errorf("deleted %d, message %q", res.Deleted, res.Message)
	}
	if got := nonGET(e2); len(got) != 2 {
		t.Errorf("non-GET requests = %v, want two DELETEs", got)
	}
	ev := auditSummary(t, e2)
	if len(ev) != 6 || ev[5] != "failed CleanupSnapshots delsnapshot 200/manual1" {
		t.Errorf("audit = %v", ev)
	}
	g, _ := e2.fake.Guest(200)
	if len(g.Snapshots) != 5 {
		t.Errorf("%d snapshots left, want 5", len(g.Snapshots))
	}
}

// auditHook runs a function after every audit record it stores: a test's
// way to act between the steps of a run.
type auditHook struct {
	next proxmoxsafe.AuditSink
	fn   func(proxmoxsafe.AuditRecord)
}

func (h auditHook) Record(ctx context.Context, r proxmoxsafe.AuditRecord) error {
	err := h.next.Record(ctx, r)
	h.fn(r)
	return err
}

// A snapshot that gains a keep marker between the plan and its turn is
// skipped, and one that vanished too; the run goes on.
func TestCleanupSkipsChangedSnapshots(t *testing.T) {
	t.Parallel()
	var fake *proxmoxtest.Server
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Retention.MaxCount = 3
		c.Audit = auditHook{next: c.Audit, fn: func(r proxmoxsafe.AuditRecord) {
			if r.Event != proxmoxsafe.AuditCompleted || r.Snapshot != "old-manual" {
				return
			}
			// After the first deletion: someone marks manual1 "keep" and
			// deletes auto1 by hand.
			fake.Update(func(c *proxmoxtest.Cluster) {
				for _, g := range c.Guests {
					if g.VMID != 200 {
						continue
					}
					var kept []*proxmoxtest.Snapshot
					for _, s := range g.Snapshots {
						if s.Name == "manual1" {
							s.Description = "KEEP for the audit"
						}
						if s.Name != "auto1" {
							kept = append(kept, s)
						}
					}
					g.Snapshots = kept
				}
			})
		}}
	})
	fake = e.fake
	res, err := e.client.CleanupSnapshots(t.Context(), cleanupIn(200, "lxc", true))
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Name+":"+string(s.Status))
	}
	if want := []string{"old-manual:deleted", "manual1:skipped", "auto1:skipped"}; !slices.Equal(steps, want) {
		t.Errorf("steps = %v, want %v", steps, want)
	}
	if got := nonGET(e); len(got) != 1 {
		t.Errorf("non-GET requests = %v, want one DELETE", got)
	}
}

func TestListSnapshotsRetentionVerdicts(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Snapshots {
		if s.Cleanup == nil {
			t.Fatalf("%s has no cleanup verdict", s.Name)
		}
		got[s.Name] = strings.Join([]string{boolWord(s.Keep, "keep"), boolWord(s.Autosnap, "auto"), boolWord(s.Cleanup.WouldDelete, "delete"), string(s.Cleanup.Rule)}, ",")
		if s.Cleanup.Reason == "" {
			t.Errorf("%s: no reason", s.Name)
		}
	}
	want := map[string]string{
		"keep-golden": "keep,-,-,keep-marker",
		"old-manual":  "-,-,delete,max-age",
		"auto1":       "-,auto,delete,max-count",
		"auto2":       "-,auto,-,within-limits",
		"manual1":     "-,-,delete,max-count",
		"auto3":       "-,auto,-,within-limits",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	// A protected guest: the policy's verdict is shown, but nothing would go.
	res, err = e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Snapshots {
		if s.Cleanup.WouldDelete {
			t.Errorf("protected guest: %s would be deleted", s.Name)
		}
		if s.Name == "old-manual" && !strings.Contains(s.Cleanup.Reason, "protected") {
			t.Errorf("old-manual reason = %q", s.Cleanup.Reason)
		}
	}
}

func boolWord(b bool, w string) string {
	if b {
		return w
	}
	return "-"
}

func TestListGuestsProtected(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{106} })
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var protected []int
	for _, g := range res.Guests {
		if g.Protected {
			protected = append(protected, g.VMID)
			if g.Manageable {
				t.Errorf("protected guest %d is manageable", g.VMID)
			}
		}
	}
	if want := []int{101, 102, 103, 106, 201}; !slices.Equal(protected, want) {
		t.Errorf("protected = %v, want %v", protected, want)
	}
}

func TestGuardPolicyErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pol   proxmoxsafe.Policy
		field string
	}{
		{proxmoxsafe.Policy{ProtectedNames: []string{"db example"}}, "Policy.ProtectedNames"},
		{proxmoxsafe.Policy{ProtectedNames: []string{""}}, "Policy.ProtectedNames"},
		{proxmoxsafe.Policy{ProtectedTags: []string{"a;b"}}, "Policy.ProtectedTags"},
		{proxmoxsafe.Policy{ProtectedPools: []string{"../x"}}, "Policy.ProtectedPools"},
		{proxmoxsafe.Policy{Retention: retention.Policy{MaxAge: -time.Hour}}, "Policy.Retention"},
		{proxmoxsafe.Policy{Retention: retention.Policy{MaxCount: 5000}}, "Policy.Retention"},
		{proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{"reset"}}, "Policy.Classes"},
	} {
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "u@pve!tok", TokenSecret: "s", Policy: tt.pol})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("%+v: err = %v, want a ConfigError on %s", tt.pol, err, tt.field)
		}
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
