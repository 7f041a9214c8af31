package proxmoxsafe_test

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// haCluster is testCluster with HA-managed guests in states the HA
// manager owns them in: 110 stopped in error, 111 running while being
// migrated, 112 running on a node being fenced, 113 running, frozen;
// 114 is a container in error; 115 is paused while being migrated.
func haCluster() *proxmoxtest.Cluster {
	c := testCluster()
	c.Guests = append(c.Guests,
		&proxmoxtest.Guest{VMID: 110, Node: "pve1", Type: "qemu", Name: "ha-err", Status: "stopped", HAManaged: true, HAState: "started", HACRMState: "error", CPUs: 1, MaxMem: 1 << 30},
		&proxmoxtest.Guest{VMID: 111, Node: "pve1", Type: "qemu", Name: "ha-mig", Status: "running", Uptime: 86400, HAManaged: true, HAState: "started", HACRMState: "migrate", CPUs: 1, MaxMem: 1 << 30},
		&proxmoxtest.Guest{VMID: 112, Node: "pve1", Type: "qemu", Name: "ha-fence", Status: "running", Uptime: 86400, HAManaged: true, HAState: "started", HACRMState: "fence", CPUs: 1, MaxMem: 1 << 30},
		&proxmoxtest.Guest{VMID: 113, Node: "pve1", Type: "qemu", Name: "ha-frozen", Status: "running", Uptime: 86400, HAManaged: true, HAState: "started", HACRMState: "freeze", CPUs: 1, MaxMem: 1 << 30},
		&proxmoxtest.Guest{VMID: 114, Node: "pve1", Type: "lxc", Name: "ha-ct-err", Status: "stopped", HAManaged: true, HAState: "started", HACRMState: "error", CPUs: 1, MaxMem: 512 << 20},
		&proxmoxtest.Guest{VMID: 115, Node: "pve1", Type: "qemu", Name: "ha-paused-mig", Status: "running", Paused: true, Uptime: 86400, HAManaged: true, HAState: "started", HACRMState: "migrate", CPUs: 1, MaxMem: 1 << 30},
	)
	return c
}

// TestPowerRefusedInHAState: a power action on a guest whose HA state
// is one the HA manager owns it in (error, migrate, fence, freeze, …) is
// refused with the state and what to do, before any approval, with no
// mutating request — whichever tool asks (vm_power, the responder's
// start and reboot, reset, suspend, resume) and with a plan too. Before, a start
// in error, a stop while migrate and a shutdown while fence were planned
// and submitted.
func TestPowerRefusedInHAState(t *testing.T) {
	t.Parallel()
	power := func(vmid int, typ proxmoxsafe.GuestType, a proxmoxsafe.PowerAction, plan bool) func(e *env) error {
		return func(e *env) error {
			in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid}, Action: a}
			in.Plan = plan
			in.Approval = in.ApprovalPhrase()
			_, err := e.client.GuestPower(t.Context(), in)
			return err
		}
	}
	for _, tc := range []struct {
		name    string
		call    func(e *env) error
		mention []string
	}{
		{"start in error", power(110, proxmoxsafe.TypeQEMU, proxmoxsafe.ActionStart, false), []string{"HA state error", "ha-manager set vm:110 --state disabled"}},
		{"plan of a start in error", power(110, proxmoxsafe.TypeQEMU, proxmoxsafe.ActionStart, true), []string{"HA state error"}},
		{"container start in error", power(114, proxmoxsafe.TypeLXC, proxmoxsafe.ActionStart, false), []string{"HA state error", "ct:114"}},
		{"stop while migrate", power(111, proxmoxsafe.TypeQEMU, proxmoxsafe.ActionStop, false), []string{"HA state migrate", "wait for the move to finish"}},
		{"shutdown while fence", power(112, proxmoxsafe.TypeQEMU, proxmoxsafe.ActionShutdown, false), []string{"HA state fence", "fenced"}},
		{"reboot while freeze", power(113, proxmoxsafe.TypeQEMU, proxmoxsafe.ActionReboot, false), []string{"HA state freeze"}},
		{"responder start in error", func(e *env) error {
			in := proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 110}}
			in.Approval = proxmoxsafe.ApprovalPhrase("start", in.Target())
			_, err := e.client.StartGuest(t.Context(), in)
			return err
		}, []string{"HA state error"}},
		{"responder reboot while migrate", func(e *env) error {
			in := proxmoxsafe.GuardedPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 111}}
			in.Approval = proxmoxsafe.ApprovalPhrase("reboot", in.Target())
			_, err := e.client.RebootGuest(t.Context(), in)
			return err
		}, []string{"HA state migrate"}},
		{"reset while fence", func(e *env) error {
			in := proxmoxsafe.ResetGuestInput{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 112}
			in.Approval = proxmoxsafe.ApprovalPhrase("reset", in.Target())
			_, err := e.client.ResetGuest(t.Context(), in)
			return err
		}, []string{"HA state fence"}},
		{"suspend while migrate", func(e *env) error {
			in := proxmoxsafe.SuspendGuestInput{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 111}
			in.Approval = proxmoxsafe.ApprovalPhrase("suspend", in.Target())
			_, err := e.client.SuspendGuest(t.Context(), in)
			return err
		}, []string{"HA state migrate"}},
		{"resume while migrate", func(e *env) error {
			in := proxmoxsafe.ResumeGuestInput{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 115}
			in.Approval = proxmoxsafe.ApprovalPhrase("resume", in.Target())
			_, err := e.client.ResumeGuest(t.Context(), in)
			return err
		}, []string{"HA state migrate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, haCluster(), func(c *proxmoxsafe.Config) {
				c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassResponder, proxmoxsafe.ClassPowerExtra)
				c.Policy.ResetWithoutAgent = true
			})
			err := tc.call(e)
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrPrecondition, tc.mention[0], false)
			for _, m := range tc.mention[1:] {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to say %q", err, m)
				}
			}
		})
	}
}

// TestPowerPlanShowsHAState: the plan of a power action on an HA-managed
// guest in a settled state names its HA state, and who carries the
// action out.
func TestPowerPlanShowsHAState(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for a, want := range map[proxmoxsafe.PowerAction]string{
		proxmoxsafe.ActionShutdown: "HA-managed (HA state started), so the HA manager carries it out",
		proxmoxsafe.ActionReboot:   "HA-managed (HA state started), and Proxmox does this itself",
	} {
		in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: proxmoxsafe.TypeQEMU, VMID: 105}, Action: a}
		in.Plan = true
		r, err := e.client.GuestPower(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if r.Plan == nil || !strings.Contains(r.Plan.Effect, want) {
			t.Errorf("%s plan effect = %q, want it to say %q", a, r.Plan.Effect, want)
		}
	}
	if got := nonGET(e); len(got) != 0 {
		t.Errorf("non-GET requests = %v", got)
	}
}
