package proxmoxsafe

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
)

// OpResetGuest is the name of [Client.ResetGuest].
const OpResetGuest Operation = "ResetGuest"

// resetGuestOp declares [Client.ResetGuest].
var resetGuestOp = operation{verify: powerVerifier, info: OperationInfo{
	Name:         OpResetGuest,
	Class:        ClassResponder,
	Method:       "POST",
	Route:        "/nodes/{node}/qemu/{vmid}/status/reset",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "reset", Risk: riskStop},
	},
	ApprovalFormat: "APPROVE reset <node>/qemu/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, uptime and running tasks first"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
		{Path: pathVMs, Name: "VM.GuestAgent.Audit",
			Note: "for the agent ping that must fail before a reset; PVE 7 and 8 want VM.Monitor instead"},
	},
}}

// DefaultAgentPingTimeout bounds the guest-agent ping of
// [Client.ResetGuest] when [ResetGuestInput.AgentTimeout] is zero. Proxmox
// itself gives the agent 3 s before it answers "not running".
const DefaultAgentPingTimeout = 10 * time.Second

// ResetGuestInput names the VM [Client.ResetGuest] resets. Only QEMU VMs
// have a reset; containers do not.
type ResetGuestInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	// Type must be "qemu": Proxmox has no reset for containers.
	Type GuestType `json:"type" validate:"required,oneof=qemu"`
	VMID int       `json:"vmid" validate:"required,pve_vmid"`
	Controls
	// AgentTimeout bounds the guest-agent ping; zero means
	// [DefaultAgentPingTimeout]. A ping still unanswered then counts as
	// "the agent no longer answers".
	AgentTimeout time.Duration `json:"-" validate:"min=0"`
}

// Target returns the VM the input names.
func (in ResetGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// ResetGuest hard-resets a hung QEMU VM (class "responder"): the last
// resort, like pressing the reset button. It refuses a protected guest, a
// template, a locked, stopped or paused VM, a VM up for less than
// [Policy.MinUptime], and — the point of the guard — a VM whose guest
// agent still answers a ping (the guest is alive: reboot it instead). A VM
// without a configured agent cannot tell, and is refused unless
// [Policy.ResetWithoutAgent] is set. The ping (POST agent/ping, changing
// nothing) needs VM.GuestAgent.Audit (PVE 9) or VM.Monitor (PVE 7/8).
func (c *Client) ResetGuest(ctx context.Context, in ResetGuestInput) (*Receipt, error) {
	t := in.Target()
	timeout := in.AgentTimeout
	if timeout == 0 {
		timeout = DefaultAgentPingTimeout
	}
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &resetGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "reset",
		input:    in,
		target:   t,
		given:    in.Approval,
		precondition: func(ctx context.Context, s GuestState) error {
			if err := resetPrecondition(t, s); err != nil {
				return err
			}
			if err := c.policy.protect.checkUptime("reset", t, s, s.Uptime); err != nil {
				return err
			}
			return c.agentGone(ctx, t, s, timeout)
		},
		effect: func(s GuestState) string {
			return "hard-reset " + describe(t, s) + " at once, like pressing its reset button (its guest agent does not answer; unsaved data in the guest may be lost)" + haEffect("reset", s)
		},
		path: guestPath(t, "status", "reset"),
		form: url.Values{},
	}})
}

func resetPrecondition(t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates do not run", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case s.Status != "running":
		return refuse(ErrPrecondition, "%s is not running (%s); a reset needs a running VM (start it instead)", who, s.Status)
	case s.Paused():
		return refuse(ErrPrecondition, "%s is paused, not hung; resume it instead of resetting it", who)
	}
	return haPrecondition("reset", t, s)
}

// agentGone pings the VM's guest agent and returns nil only when it does
// not answer: Proxmox says the agent is not running, the ping times out,
// or (with ResetWithoutAgent) no agent is configured. A live agent, or an
// answer that says nothing about the agent, refuses the reset.
func (c *Client) agentGone(ctx context.Context, t Target, s GuestState, timeout time.Duration) error {
	who := describe(t, s)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out struct{}
	err := c.post(pctx, guestPath(t, "agent", "ping"), url.Values{}, &out)
	if err == nil {
		return refuse(ErrPrecondition, "the guest agent of %s answers a ping: the guest is alive, so a hard reset is not warranted (reboot it instead)", who)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up, not the agent
	}
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return nil // no answer within the timeout: hung
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.StatusCode == 500 {
		msg := ae.Message
		switch {
		case strings.Contains(msg, "No QEMU guest agent configured"):
			if c.policy.protect.resetWithoutAgent {
				return nil
			}
			return refuse(ErrPrecondition, "%s has no guest agent configured, so whether it is hung cannot be told; a reset is refused unless the operator allows resets without an agent", who)
		case strings.Contains(msg, "QEMU guest agent is not running"), strings.Contains(msg, "qmp command 'guest-ping' failed"):
			return nil
		}
	}
	// 403 (no VM.GuestAgent.Audit), a node that is down, a VM that stopped
	// meanwhile: none of these says the agent is gone.
	return refuse(ErrPrecondition, "whether the guest agent of %s answers could not be established (%v)", who, err)
}
