package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

func powerIn(node string, typ proxmoxsafe.GuestType, vmid int, a proxmoxsafe.PowerAction) proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Action: a}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(a), in.Target())
	return in
}

func TestGuestPowerHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node   string
		typ    proxmoxsafe.GuestType
		vmid   int
		action proxmoxsafe.PowerAction
		task   string
	}{
		{"pve1", "qemu", 101, proxmoxsafe.ActionStart, "qmstart"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionShutdown, "qmshutdown"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionReboot, "qmreboot"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionStop, "qmstop"},
		{"pve1", "qemu", 102, proxmoxsafe.ActionStop, "qmstop"}, // a paused VM can be stopped
		{"pve2", "lxc", 201, proxmoxsafe.ActionStart, "vzstart"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionShutdown, "vzshutdown"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionReboot, "vzreboot"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionStop, "vzstop"},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ)+"/"+string(tc.action), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			rec, err := e.client.GuestPower(t.Context(), powerIn(tc.node, tc.typ, tc.vmid, tc.action))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Task.Node != tc.node || rec.Task.ID != itoa(tc.vmid) || !strings.HasPrefix(rec.UPID, "UPID:"+tc.node+":") {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/" + string(tc.action)
			if len(mut) != 1 || reqLine(mut[0]) != want || len(mut[0].Form) != 0 {
				t.Errorf("mutating requests = %v, want one %q without params", reqLines(mut), want)
			}
			// The precondition reads come first, sent at once (in either
			// order): the guest's state and its node's active tasks for
			// this guest; then the one request.
			reqs := e.requests()
			all := reqLines(reqs)
			wantReads := []string{
				"GET /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/current",
				"GET /nodes/" + tc.node + "/tasks",
			}
			if len(all) != 3 || all[2] != want || !slices.Equal(slices.Sorted(slices.Values(all[:2])), wantReads) {
				t.Fatalf("requests = %v, want %v in either order, then %q", all, wantReads, want)
			}
			tasks := reqs[slices.Index(all, wantReads[1])]
			if q := tasks.Query; q.Get("source") != "active" || q.Get("vmid") != itoa(tc.vmid) {
				t.Errorf("active-task query = %v, want source=active and vmid=%d", q, tc.vmid)
			}
			for _, ev := range []string{`"event":"approved"`, `"event":"submitted"`, rec.UPID} {
				if !strings.Contains(e.audit.String(), ev) {
					t.Errorf("audit log lacks %s:\n%s", ev, e.audit.String())
				}
			}
			if sum, err := auditlog.Verify(strings.NewReader(e.audit.String()), nil); err != nil || sum.Records != 3 {
				t.Errorf("audit log verifies %d records (anchor, approved, submitted), err %v", sum.Records, err)
			}
		})
	}
}

func TestGuestPowerHAManaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve2", "qemu", 105, proxmoxsafe.ActionShutdown))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.HAManaged || rec.Task.Type != "hastop" || !strings.Contains(rec.Note, "HA manager") {
		t.Errorf("receipt = %+v", rec)
	}
}

// Every refusal: the right error kind, "no action was taken", no mutating
// request, and no request at all when the input itself was invalid or the
// policy refused it.
func TestGuestPowerRefusals(t *testing.T) {
	t.Parallel()
	ok := func() proxmoxsafe.GuestPowerInput { return powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown) }
	with := func(f func(*proxmoxsafe.GuestPowerInput)) proxmoxsafe.GuestPowerInput {
		in := ok()
		f(&in)
		return in
	}
	// approve re-computes the phrase after the target changed, so only the
	// step under test refuses.
	approved := func(in proxmoxsafe.GuestPowerInput) proxmoxsafe.GuestPowerInput {
		in.Approval = in.ApprovalPhrase()
		return in
	}
	const (
		none     = iota // zero requests of any kind
		readOnly        // reads allowed, zero mutating
	)
	tests := []struct {
		name     string
		mod      func(*proxmoxsafe.Config)
		in       proxmoxsafe.GuestPowerInput
		kind     error
		requests int
		mention  string
	}{
		// validation
		{name: "empty node", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node: is required"},
		{name: "node traversal", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1/../../access" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node injection", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1;rm" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node lookalike", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve\u0031\u0307" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node too long", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = strings.Repeat("a", 256) }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "node dot", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve1.example" }), kind: proxmoxsafe.ErrInvalidInput, mention: "node"},
		{name: "vmid zero", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 0 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "vmid 99", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 99 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid: must be a VMID from 100"},
		{name: "vmid negative", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = -100 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "vmid huge", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 1_000_000_000 }), kind: proxmoxsafe.ErrInvalidInput, mention: "vmid"},
		{name: "type", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "openvz" }), kind: proxmoxsafe.ErrInvalidInput, mention: "type: must be one of: qemu, lxc"},
		{name: "type case", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "QEMU" }), kind: proxmoxsafe.ErrInvalidInput, mention: "type"},
		{name: "action", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "reset" }), kind: proxmoxsafe.ErrInvalidInput, mention: "action: must be one of: start, shutdown, reboot, stop"},
		{name: "approval too long", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = strings.Repeat("A", 300) }), kind: proxmoxsafe.ErrInvalidInput, mention: "approval"},
		// policy
		{name: "node not allowlisted", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve3"; i.VMID = 300 })), kind: proxmoxsafe.ErrNotAllowed, mention: `node "pve3" is not on the node allowlist`},
		{name: "empty allowlist", mod: func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = nil }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: "allowlist, which is empty"},
		{name: "class disabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot} }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: `"power" mutation class is not enabled`},
		{name: "read-only", mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }, in: ok(), kind: proxmoxsafe.ErrNotAllowed, mention: "read-only"},
		{name: "protected guest", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 106 })), kind: proxmoxsafe.ErrNotAllowed, mention: "guest 106 is protected"},
		// preconditions (one status/current read, no mutation)
		{name: "start running", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "start" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already running"},
		{name: "start paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Action = "start"; i.VMID = 102 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "shutdown stopped", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 101 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "reboot stopped", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 101; i.Action = "reboot" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "stop stopped lxc", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve2"; i.Type = "lxc"; i.VMID = 201; i.Action = "stop" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "already stopped"},
		{name: "reboot paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 102; i.Action = "reboot" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "shutdown paused", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 102 })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "paused"},
		{name: "template", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 103; i.Action = "start" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "template"},
		{name: "locked", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.VMID = 104; i.Action = "stop" })), kind: proxmoxsafe.ErrPrecondition, requests: readOnly, mention: "locked (backup)"},
		{name: "guest not on node", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Node = "pve2" })), kind: proxmoxsafe.ErrNotFound, requests: readOnly, mention: "does not exist"},
		{name: "wrong type", in: approved(with(func(i *proxmoxsafe.GuestPowerInput) { i.Type = "lxc" })), kind: proxmoxsafe.ErrNotFound, requests: readOnly, mention: "does not exist"},
		// approval
		{name: "approval missing", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly, mention: `"APPROVE shutdown pve1/qemu/100"`},
		{name: "approval lower case", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "approve shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly, mention: "does not match"},
		{name: "approval extra space", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE  shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval trailing space", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval += " " }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval trailing newline", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval += "\n" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval zero width", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/qemu/\u200b100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval bidi", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "\u202eAPPROVE shutdown pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other vmid", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/qemu/101" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other node", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve2/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other action", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE stop pve1/qemu/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval other type", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "APPROVE shutdown pve1/lxc/100" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval yes", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "yes" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
		{name: "approval confirm=true", in: with(func(i *proxmoxsafe.GuestPowerInput) { i.Approval = "true" }), kind: proxmoxsafe.ErrApprovalRequired, requests: readOnly},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.mod)
			rec, err := e.client.GuestPower(t.Context(), tc.in)
			if err == nil {
				t.Fatalf("not refused; receipt %+v", rec)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("err = %v, want kind %v", err, tc.kind)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("refusal leaks the secret: %v", err)
			}
			if !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("refusal does not say no action was taken: %v", err)
			}
			if tc.mention != "" && !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %v, want it to mention %q", err, tc.mention)
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after refusal: %v", reqLines(m))
			}
			if tc.requests == none {
				if r := e.requests(); len(r) != 0 {
					t.Errorf("requests after refusal: %v, want none", reqLines(r))
				}
			}
			if !strings.Contains(e.audit.String(), `"event":"refused"`) {
				t.Errorf("refusal not audited:\n%s", e.audit.String())
			}
			if strings.Contains(e.audit.String(), `"event":"approved"`) {
				t.Errorf("refusal audited as approved")
			}
		})
	}
}

func TestWaitPowerCompleted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node     string
		typ      proxmoxsafe.GuestType
		vmid     int
		action   proxmoxsafe.PowerAction
		want     string
		observed string
	}{
		{"pve1", "qemu", 101, proxmoxsafe.ActionStart, "running", "running"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionShutdown, "stopped", "stopped"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionStop, "stopped", "stopped"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionReboot, "running", "running again (uptime 1 s)"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionReboot, "running", "running again (uptime 1 s)"},
		{"pve2", "lxc", 201, proxmoxsafe.ActionStart, "running", "running"},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ)+"/"+string(tc.action), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := powerIn(tc.node, tc.typ, tc.vmid, tc.action)
			in.Wait = fastVerify()
			r, err := e.client.GuestPower(t.Context(), in)
			if err != nil {
				t.Fatalf("GuestPower: %v", err)
			}
			o := r.Outcome
			if o == nil {
				t.Fatal("no outcome")
			}
			if o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.ExitStatus != "OK" || o.TaskStatus != "stopped" {
				t.Errorf("outcome = %+v", o)
			}
			if o.After == nil || o.After.Status != tc.want || o.Observed != tc.observed {
				t.Errorf("after = %+v, observed %q", o.After, o.Observed)
			}
			if o.UPID != r.UPID || o.TaskPolls < 2 || o.StatePolls < 1 || o.Timeout != 30*time.Second || o.TimeoutClamped {
				t.Errorf("bookkeeping = %+v", o)
			}
			if !strings.Contains(o.Message, "completed OK") {
				t.Errorf("message = %q", o.Message)
			}
			if g, _ := e.fake.Guest(tc.vmid); g.Status != tc.want {
				t.Errorf("fake guest is %s", g.Status)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Fatalf("audit events = %v", got)
			}
			c := recs[2]
			if c.UPID != r.UPID || c.Op != "GuestPower" || c.Action != string(tc.action) || c.VMID != tc.vmid || !strings.HasPrefix(c.Reason, "verified: ") {
				t.Errorf("completed record = %+v", c)
			}
			// Waiting never sends another mutating request.
			if m := e.fake.MutatingRequests(); len(m) != 1 {
				t.Errorf("mutating requests = %v", reqLines(m))
			}
		})
	}
}

// TestWaitHAManaged: an hastop task stops OK at once, and the guest only
// stops after a few status reads (the HA manager acting later). The wait
// must not call that completed until the guest is stopped.
func TestWaitHAManaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var mu sync.Mutex
	var phases []proxmoxsafe.ProgressPhase
	var stillRunning []bool
	in := powerIn("pve2", "qemu", 105, proxmoxsafe.ActionShutdown)
	in.Wait = fastVerify()
	in.Wait.OnProgress = func(p proxmoxsafe.Progress) {
		g, _ := e.fake.Guest(105)
		mu.Lock()
		defer mu.Unlock()
		phases = append(phases, p.Phase)
		stillRunning = append(stillRunning, g.Status == "running")
	}
	r, err := e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatalf("GuestPower: %v", err)
	}
	if r.Task.Type != "hastop" || !r.HAManaged {
		t.Fatalf("receipt = %+v, want an hastop task", r)
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeCompleted || o.After == nil || o.After.Status != "stopped" || !o.After.HAManaged {
		t.Errorf("outcome = %+v", o)
	}
	if n := statusReadsAfterPost(e, "105"); n < 2 || o.StatePolls != n {
		t.Errorf("status/current read %d times after the POST (outcome says %d); want more than one", n, o.StatePolls)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(phases) < 2 || phases[len(phases)-1] != proxmoxsafe.ProgressDone || !slices.Contains(phases, proxmoxsafe.ProgressWaitingForHA) {
		t.Fatalf("progress phases = %v", phases)
	}
	for i, p := range phases {
		if p == proxmoxsafe.ProgressWaitingForHA && !stillRunning[i] {
			t.Errorf("progress %d said waiting for HA while the guest was already stopped", i)
		}
	}
	if stillRunning[len(stillRunning)-1] {
		t.Error("the wait reported done while the fake guest was still running")
	}
	if g, _ := e.fake.Guest(105); g.Status != "stopped" {
		t.Errorf("fake guest is %s", g.Status)
	}
}
