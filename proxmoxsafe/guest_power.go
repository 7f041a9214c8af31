package proxmoxsafe

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// OpGuestPower is the name of [Client.GuestPower].
const OpGuestPower Operation = "GuestPower"

// guestPowerOp declares [Client.GuestPower].
var guestPowerOp = operation{verify: powerVerifier, info: OperationInfo{
	Name:         OpGuestPower,
	Class:        ClassPower,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/status/{action}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "start", Risk: riskStart},
		{Name: "shutdown", Risk: riskShutdown},
		{Name: "reboot", Risk: riskShutdown},
		{Name: "stop", Risk: riskStop},
	},
	ApprovalFormat: "APPROVE <action> <node>/<type>/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state and its running tasks first; without Sys.Audit on the node only the token's own tasks are seen"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
	},
}}

// GuestPowerInput is a request to change a guest's power state.
type GuestPowerInput struct {
	GuestRef
	Action PowerAction `json:"action" validate:"required,oneof=start shutdown reboot stop" jsonschema:"shutdown and reboot ask the guest OS; stop cuts the power (unsaved data may be lost)."`
	Controls
}

// Target returns the guest the input names.
func (in GuestPowerInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// ApprovalPhrase returns the phrase that approves this input:
// [ApprovalPhrase] for its action and guest. No other field changes what
// a power action does (Wait only changes how long the call waits).
func (in GuestPowerInput) ApprovalPhrase() string {
	return ApprovalPhrase(string(in.Action), in.Target())
}

// GuestPower starts, shuts down, reboots or stops one guest.
//
// It runs the full safety pipeline: the input is validated; the policy must
// enable the "power" class, allow the node and not protect the guest; the
// guest's fresh status/current must make the action sensible (not locked,
// not a template, start only when stopped, shutdown/reboot/stop only when
// running, no reboot or shutdown of a paused VM, no reboot of a guest up
// for less than [Policy.MinUptime]), no task may be running
// for the guest, and no other mutation of it may be under way through this
// Client; in.Approval must equal
// [ApprovalPhrase] (or the configured [Approver] must agree); an audit
// record is written; only then is one POST sent. Any refusal sends no
// mutating request and says why.
//
// The [Receipt] proves submission only. For HA-managed guests the task only
// asks the HA manager; see [Receipt.HAManaged].
//
// With in.Wait set, GuestPower then runs [Client.Verify] and returns the
// receipt with its Outcome. Once the request was submitted the receipt is
// always returned, even with an error: a failed task returns a *[TaskError]
// (matching [ErrTaskFailed]); a wait cut short by ctx or by Proxmox read
// errors returns that error with Outcome "submitted". A timeout is not an
// error: Outcome.Status says "timeout".
func (c *Client) GuestPower(ctx context.Context, in GuestPowerInput) (*Receipt, error) {
	t := in.Target()
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &guestPowerOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   string(in.Action),
		input:    in,
		target:   t,
		given:    in.Approval,
		precondition: func(_ context.Context, s GuestState) error {
			if err := powerPrecondition(in.Action, t, s); err != nil {
				return err
			}
			if in.Action == ActionReboot {
				return c.policy.protect.checkUptime(string(in.Action), t, s, s.Uptime)
			}
			return nil
		},
		effect: func(s GuestState) string { return powerEffect(in.Action, t, s) },
		path:   guestPath(t, "status", string(in.Action)),
		form:   url.Values{},
	}})
}

func powerPrecondition(a PowerAction, t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates cannot be powered on or off", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case s.Status != "running" && s.Status != "stopped":
		return refuse(ErrPrecondition, "%s is in state %q; power actions need a known state", who, s.Status)
	}
	if err := haPrecondition(string(a), t, s); err != nil {
		return err
	}
	switch a {
	case ActionStart:
		if s.Status == "running" {
			if s.Paused() {
				return refuse(ErrPrecondition, "%s is paused, not stopped; start does not resume it", who)
			}
			return refuse(ErrPrecondition, "%s is already running", who)
		}
	case ActionShutdown, ActionReboot, ActionStop:
		if s.Status == "stopped" {
			return refuse(ErrPrecondition, "%s is already stopped", who)
		}
		if s.Paused() && a != ActionStop {
			return refuse(ErrPrecondition, "%s is paused; a paused VM cannot %s (resume it first, or stop it)", who, a)
		}
	}
	return nil
}

func powerEffect(a PowerAction, t Target, s GuestState) string {
	who := describe(t, s)
	var e string
	switch a {
	case ActionStart:
		e = "start " + who
	case ActionShutdown:
		e = "ask the operating system of " + who + " to shut down cleanly"
	case ActionReboot:
		e = "reboot " + who + " (clean shutdown, then start)"
	case ActionStop:
		e = "cut the power of " + who + " at once, without a clean shutdown (unsaved data in the guest may be lost)"
	}
	return e + haEffect(string(a), s)
}

// powerVerifier proves a power action from the guest's fresh
// status/current: start → running, shutdown and stop → stopped, reboot
// and reset (a reset restarts the guest like a reboot, only without asking
// it) → running with an uptime younger than the task.
var powerVerifier = &verifier{proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	switch r.Action {
	case string(ActionStart):
		return stateProof(r, stateWant{status: "running"}), nil
	case string(ActionReboot), "reset":
		return stateProof(r, stateWant{status: "running", reboot: true}), nil
	case string(ActionShutdown), string(ActionStop):
		return stateProof(r, stateWant{status: "stopped"}), nil
	}
	return proof{}, errUnknownAction
}}

// stateWant is what the guest's fresh status/current must show.
type stateWant struct {
	status string // "running" or "stopped"
	reboot bool   // also an uptime younger than the task
	paused bool   // running and paused (suspend)
	lock   string // a lock the state must show ("suspended" after a hibernation)
}

func (want stateWant) String() string {
	switch {
	case want.reboot:
		return "the guest running again after the reboot"
	case want.paused:
		return "the guest paused"
	case want.lock != "":
		return "the guest " + want.status + " and locked (" + want.lock + ")"
	}
	return "the guest " + want.status
}

// stateProof waits until the guest's status/current shows want.
func stateProof(r *Receipt, want stateWant) proof {
	return proof{what: r.Action + " of " + r.Target.guestString(), expected: want.String(),
		observe: func(ctx context.Context, w *waiter) (bool, error) { return w.observeState(ctx, want) }}
}

// observeState is one read of status/current against want.
func (w *waiter) observeState(ctx context.Context, want stateWant) (bool, error) {
	s, uptime, err := w.c.readState(ctx, w.r.Target)
	if err != nil {
		return false, err
	}
	w.out.After, w.out.Uptime = &s, uptime
	w.out.Observed = s.Status
	if s.Paused() {
		w.out.Observed += " (paused)"
	}
	if want.lock != "" && s.Lock != "" {
		w.out.Observed += ", locked (" + s.Lock + ")"
	}
	if s.Status != want.status || (want.status == "running" && s.Paused() != want.paused) || (want.lock != "" && s.Lock != want.lock) {
		return false, nil
	}
	if want.reboot && uptime > 0 {
		// A guest that restarted after the task began has an uptime no
		// larger than the time since then. Uptime 0 while running means
		// Proxmox did not report it: then "running" is all we can check.
		since := time.Since(w.ref.StartTime) + rebootClockSlack
		if time.Duration(uptime)*time.Second > since {
			w.out.Observed = fmt.Sprintf("running, but its uptime (%d s) predates the reboot", uptime)
			return false, nil
		}
		w.out.Observed = fmt.Sprintf("running again (uptime %d s)", uptime)
	}
	return true, nil
}
