package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// newPowerExtraEnv: the responder cluster (its protections too) plus a
// hibernated VM 111 and an HA-managed running VM 112, with only the
// power-extra class enabled.
func newPowerExtraEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	cl := responderCluster()
	cl.Guests = append(cl.Guests,
		&proxmoxtest.Guest{VMID: 111, Node: "pve1", Type: "qemu", Name: "sleeper", Status: "stopped", Lock: "suspended"},
		&proxmoxtest.Guest{VMID: 112, Node: "pve1", Type: "qemu", Name: "ha-vm", Status: "running", Uptime: 7200, HAManaged: true, HAState: "started"},
	)
	fake := proxmoxtest.NewUnstartedServer(cl)
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:   []string{"pve1", "pve2"},
			Classes:        []proxmoxsafe.Class{proxmoxsafe.ClassPowerExtra},
			ProtectedNames: []string{"db"},
		}
		if mod != nil {
			mod(c)
		}
	})
}

func suspendIn(vmid int, toDisk bool) proxmoxsafe.SuspendGuestInput {
	in := proxmoxsafe.SuspendGuestInput{Node: "pve1", Type: "qemu", VMID: vmid, ToDisk: toDisk}
	in.Approval = in.ApprovalPhrase()
	return in
}

func resumeIn(vmid int) proxmoxsafe.ResumeGuestInput {
	return proxmoxsafe.ResumeGuestInput{
		Node:     "pve1",
		Type:     "qemu",
		VMID:     vmid,
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("resume", guestTarget("pve1", "qemu", vmid))},
	}
}

// Suspend (pause and hibernate) and resume: the exact request, the task
// type, the verified state and the audit trail.
func TestSuspendResumeHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		call     func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error)
		path     string
		form     string
		taskType string
		observed string
		params   []string
	}{
		{name: "pause", path: "/nodes/pve1/qemu/100/status/suspend", taskType: "qmpause", observed: "running (paused)",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := suspendIn(100, false)
				in.Wait = fastVerify()
				return c.SuspendGuest(ctx, in)
			}},
		{name: "hibernate", path: "/nodes/pve1/qemu/100/status/suspend", form: "todisk=1", taskType: "qmsuspend", observed: "stopped, locked (suspended)", params: []string{"todisk=1"},
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := suspendIn(100, true)
				in.Wait = fastVerify()
				return c.SuspendGuest(ctx, in)
			}},
		{name: "resume paused", path: "/nodes/pve1/qemu/108/status/resume", taskType: "qmresume", observed: "running",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := resumeIn(108)
				in.Wait = fastVerify()
				return c.ResumeGuest(ctx, in)
			}},
		{name: "resume hibernated", path: "/nodes/pve1/qemu/111/status/resume", taskType: "qmresume", observed: "running",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := resumeIn(111)
				in.Wait = fastVerify()
				return c.ResumeGuest(ctx, in)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newPowerExtraEnv(t, nil)
			r, err := tt.call(t.Context(), e.client)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "POST" || muts[0].Path != tt.path || muts[0].Form.Encode() != tt.form {
				t.Fatalf("mutating requests = %+v, want one POST %s with %q", muts, tt.path, tt.form)
			}
			if r.Task.Type != tt.taskType {
				t.Errorf("task type = %q, want %q", r.Task.Type, tt.taskType)
			}
			o := r.Outcome
			if o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed and verified %q", o, tt.observed)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Fatalf("audit events = %v", got)
			}
			for _, rec := range recs[:2] { // the approved request; the completion record names its UPID
				if !slices.Equal(rec.Params, tt.params) || (rec.Op != proxmoxsafe.OpSuspendGuest && rec.Op != proxmoxsafe.OpResumeGuest) {
					t.Errorf("audit record = %+v, want params %v", rec, tt.params)
				}
			}
		})
	}
}

// Every refusal says why, audits one refusal and sends no mutating request.
func TestSuspendResumeRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		call    func(ctx context.Context, c *proxmoxsafe.Client) error
		kind    error
		mention string
		noReq   bool
	}{
		{name: "class not enabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} },
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(100, false))
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: `"power-extra" mutation class is not enabled`, noReq: true},
		{name: "read-only", mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true },
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResumeGuest(ctx, resumeIn(108))
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: "read-only", noReq: true},
		{name: "node not allowlisted",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := suspendIn(100, false)
				in.Node = "pve3"
				_, err := c.SuspendGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: "allowlist", noReq: true},
		{name: "protected guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(101, false))
				return err
			}, kind: proxmoxsafe.ErrNotAllowed, mention: "protected"},
		{name: "container",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := suspendIn(200, false)
				in.Type = "lxc"
				_, err := c.SuspendGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrInvalidInput, mention: "type: must be one of: qemu", noReq: true},
		{name: "suspend a stopped VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(107, false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "not running"},
		{name: "suspend a paused VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(108, false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "already paused"},
		{name: "suspend a locked VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(110, false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "suspend a template",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(109, false))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "template"},
		{name: "hibernate an HA-managed VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.SuspendGuest(ctx, suspendIn(112, true))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "HA-managed"},
		{name: "resume a running VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResumeGuest(ctx, resumeIn(100))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "not paused; there is nothing to resume"},
		{name: "resume a stopped VM",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResumeGuest(ctx, resumeIn(107))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "start it instead"},
		{name: "resume a VM locked for a backup",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				_, err := c.ResumeGuest(ctx, resumeIn(110))
				return err
			}, kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "no approval",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := suspendIn(100, false)
				in.Approval = ""
				_, err := c.SuspendGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE suspend pve1/qemu/100"},
		{name: "pause phrase does not approve a hibernation",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := suspendIn(100, true)
				in.Approval = suspendIn(100, false).Approval
				_, err := c.SuspendGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE suspend pve1/qemu/100 todisk=1"},
		{name: "phrase for another guest",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := suspendIn(100, false)
				in.Approval = suspendIn(105, false).Approval
				_, err := c.SuspendGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE suspend pve1/qemu/100"},
		{name: "phrase of another action",
			call: func(ctx context.Context, c *proxmoxsafe.Client) error {
				in := resumeIn(108)
				in.Approval = proxmoxsafe.ApprovalPhrase("start", guestTarget("pve1", "qemu", 108))
				_, err := c.ResumeGuest(ctx, in)
				return err
			}, kind: proxmoxsafe.ErrApprovalRequired, mention: "APPROVE resume pve1/qemu/108"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newPowerExtraEnv(t, tt.mod)
			assertRefusedNothingSent(t, e, tt.call(t.Context(), e.client), tt.kind, tt.mention, tt.noReq)
		})
	}
}

// A suspend task that fails inside Proxmox: the receipt comes back with a
// failed outcome, the VM is still running unpaused, the audit says failed.
func TestSuspendTaskFailed(t *testing.T) {
	t.Parallel()
	e := newPowerExtraEnv(t, nil)
	const msg = "VM 100 qmp command 'stop' failed - got timeout"
	e.fake.FailNextTask(msg)
	in := suspendIn(100, false)
	in.Wait = fastVerify()
	r, err := e.client.SuspendGuest(t.Context(), in)
	var te *proxmoxsafe.TaskError
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !errors.As(err, &te) || te.ExitStatus != msg {
		t.Fatalf("err = %v, want a TaskError", err)
	}
	if r == nil || r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed || r.Outcome.Verified || r.Outcome.Observed != "running" {
		t.Fatalf("receipt = %+v", r)
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Errorf("audit events = %v", got)
	}
}
