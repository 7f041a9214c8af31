package proxmoxsafe_test

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestProvisionVMIDHiddenFromResources: a VMID the token cannot see in
// /cluster/resources is still refused, because /cluster/nextid?vmid=
// answers that it exists.
func TestProvisionVMIDHiddenFromResources(t *testing.T) {
	t.Parallel()
	cl := provisionCluster()
	all := proxmoxtest.AllPrivileges()
	cl.Tokens["automation@pve!mcp"].Privileges = map[string][]string{
		"/vms/9000": all, "/vms/123": all, "/storage": all, "/nodes": all, "/sdn": all, "/": {"Sys.Audit"},
	}
	fake := proxmoxtest.NewUnstartedServer(cl)
	fake.StartTLS()
	e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassProvision}}
	})
	_, err := e.client.CloneGuest(t.Context(), approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 101}))
	assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrPrecondition, "VMID 101 is already in use (Proxmox: VM 101 already exists)", false)
}
