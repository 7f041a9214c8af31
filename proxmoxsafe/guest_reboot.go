package proxmoxsafe

import "context"

// OpRebootGuest is the name of [Client.RebootGuest].
const OpRebootGuest Operation = "RebootGuest"

// rebootGuestOp declares [Client.RebootGuest].
var rebootGuestOp = operation{verify: powerVerifier, info: OperationInfo{
	Name:         OpRebootGuest,
	Class:        ClassResponder,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/status/reboot",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "reboot", Risk: riskShutdown},
	},
	ApprovalFormat: "APPROVE reboot <node>/<type>/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, uptime and running tasks first"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
	},
}}

// RebootGuest reboots a running guest cleanly (class "responder"). Besides
// the checks of [Client.GuestPower] it refuses a guest that has been up
// for less than [Policy.MinUptime] (default one hour): a responder that
// reacts to the same alert twice must not reboot a guest in a loop.
func (c *Client) RebootGuest(ctx context.Context, in GuardedPowerInput) (*Receipt, error) {
	return c.guardedPower(ctx, in, ActionReboot, &rebootGuestOp)
}
