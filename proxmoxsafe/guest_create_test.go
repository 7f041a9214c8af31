package proxmoxsafe_test

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestProvisionPlan: plan: true runs the checks and sends nothing
// mutating; the plan names the request, the phrase and the new guest.
func TestProvisionPlan(t *testing.T) {
	t.Parallel()
	e := newProvisionEnv(t, nil)
	in := ctIn()
	in.Approval, in.Plan = "", true
	r, err := e.client.CreateContainer(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Plan
	if p == nil || p.Method != "POST" || p.Path != "/nodes/pve1/lxc" || p.Params["unprivileged"] != "1" || p.Params["vmid"] != "140" ||
		p.Approval != ctIn().Approval || p.Class != proxmoxsafe.ClassProvision {
		t.Fatalf("plan = %+v", p)
	}
	if r.UPID != "" || r.NewGuest == nil || r.NewGuest.VMID != 140 {
		t.Errorf("receipt = %+v", r)
	}
	if n := len(e.fake.MutatingRequests()); n != 0 {
		t.Errorf("%d mutating requests for a plan", n)
	}
}
