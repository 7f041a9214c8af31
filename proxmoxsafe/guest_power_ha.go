package proxmoxsafe

import "strconv"

// haPrecondition refuses a power action (start, shutdown, reboot, stop,
// reset, suspend, resume) on a guest the HA manager is in the middle of handling. For an
// HA-managed guest, status/current's "ha.state" is the HA manager's (CRM)
// state of the resource (pve-ha-manager Config.pm get_service_status
// reads it from the manager status): only "started" and "stopped" are
// settled states in which a power request is the person's to make; an
// empty state (a resource the manager has not picked up yet) is let
// through, the request then only sets what the manager will do. In
// every other state the manager owns the guest: a start or stop would
// be queued behind it, ignored (error) or fight it (a migration, a
// recovery after a node failure), and a reboot or reset, which Proxmox
// does not hand to the HA manager, would act under it. Unknown states
// (a newer release's) are refused too. The state is read with the rest
// of status/current, so this costs no request.
func haPrecondition(action string, t Target, s GuestState) error {
	if !s.HAManaged {
		return nil
	}
	who := describe(t, s)
	sid := haSID(t)
	switch s.HAState {
	case "", "started", "stopped":
		return nil
	case "error":
		return refuse(ErrPrecondition, "%s is in HA state error: the HA manager gave up on it after a failed start, stop, migration or recovery and acts on no request until the error is cleared; clear it first: set the HA resource to disabled (ha-manager set %s --state disabled), fix the cause, then set it to started or stopped; a %s now would do nothing", who, sid, action)
	case "fence":
		return refuse(ErrPrecondition, "%s is in HA state fence: its node lost the cluster and is being fenced; the HA manager recovers the guest on another node once the node is fenced; wait for that, then read its state again", who)
	case "recovery":
		return refuse(ErrPrecondition, "%s is in HA state recovery: the HA manager is moving it to another node after its node failed; wait for the recovery to finish, then read its state again", who)
	case "migrate", "relocate":
		return refuse(ErrPrecondition, "%s is in HA state %s: the HA manager is moving it to another node; wait for the move to finish, then read its state again", who, s.HAState)
	case "freeze":
		return refuse(ErrPrecondition, "%s is in HA state freeze: the HA services of its node are frozen (the node is shutting down or rebooting, or in maintenance); wait until the node is back", who)
	case "request_stop":
		return refuse(ErrPrecondition, "%s is in HA state request_stop: the HA manager is already stopping it; wait for the stop to finish, then read its state again", who)
	case "request_start", "request_start_balance":
		return refuse(ErrPrecondition, "%s is in HA state %s: the HA manager is already starting it; wait for the start to finish, then read its state again", who, s.HAState)
	}
	return refuse(ErrPrecondition, "%s is in HA state %q, which this server does not know; a %s needs HA state started or stopped: check the resource with ha_status (or ha-manager status) first", who, s.HAState, action)
}

// haSID is a guest's HA resource id: vm:<vmid> or ct:<vmid>.
func haSID(t Target) string {
	if t.Type == TypeLXC {
		return "ct:" + strconv.Itoa(t.VMID)
	}
	return "vm:" + strconv.Itoa(t.VMID)
}

// haEffect is what a power action's effect adds for an HA-managed guest:
// its HA state, shown in every plan and approval, and who carries the
// action out (Proxmox hands start, shutdown and stop to the HA manager;
// it reboots and resets the guest itself).
func haEffect(action string, s GuestState) string {
	if !s.HAManaged {
		return ""
	}
	state := s.HAState
	if state == "" {
		state = "not yet known to the HA manager"
	}
	switch action {
	case string(ActionStart), string(ActionShutdown), string(ActionStop):
		return "; the guest is HA-managed (HA state " + state + "), so the HA manager carries it out"
	}
	return "; the guest is HA-managed (HA state " + state + "), and Proxmox does this itself, not through the HA manager"
}
