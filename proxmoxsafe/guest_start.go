package proxmoxsafe

import (
	"context"
	"net/url"
)

// OpStartGuest is the name of [Client.StartGuest].
const OpStartGuest Operation = "StartGuest"

// startGuestOp declares [Client.StartGuest].
var startGuestOp = operation{verify: powerVerifier, info: OperationInfo{
	Name:         OpStartGuest,
	Class:        ClassResponder,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/status/start",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "start", Risk: riskStart},
	},
	ApprovalFormat: "APPROVE start <node>/<type>/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state and its running tasks first"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
	},
}}

// The responder's guarded power operations (class "responder"). Each is
// narrower than [Client.GuestPower]: one action, and a guard that makes it
// safe for an agent with no human in the loop.

// GuardedPowerInput names the guest of [Client.StartGuest] and
// [Client.RebootGuest].
type GuardedPowerInput struct {
	GuestRef
	Controls
}

// Target returns the guest the input names.
func (in GuardedPowerInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// StartGuest starts a stopped guest (class "responder"). It refuses a
// protected guest, a guest that is running or paused, a template, and a
// locked guest; otherwise it runs the pipeline of [Client.GuestPower].
func (c *Client) StartGuest(ctx context.Context, in GuardedPowerInput) (*Receipt, error) {
	return c.guardedPower(ctx, in, ActionStart, &startGuestOp)
}

func (c *Client) guardedPower(ctx context.Context, in GuardedPowerInput, a PowerAction, op *operation) (*Receipt, error) {
	t := in.Target()
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: op, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   string(a),
		input:    in,
		target:   t,
		given:    in.Approval,
		precondition: func(_ context.Context, s GuestState) error {
			if err := powerPrecondition(a, t, s); err != nil {
				return err
			}
			if a == ActionReboot {
				return c.policy.protect.checkUptime(string(a), t, s, s.Uptime)
			}
			return nil
		},
		effect: func(s GuestState) string { return powerEffect(a, t, s) },
		path:   guestPath(t, "status", string(a)),
		form:   url.Values{},
	}})
}
