package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestProvisionLockedWhileRunning: while the task runs the new guest
// exists locked (clone), and the completion proof waits for the lock to go.
func TestProvisionLockedWhileRunning(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewUnstartedServer(provisionCluster())
	fake.TaskPolls = 1000
	fake.StartTLS()
	e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassProvision}}
	})
	r, err := e.client.CloneGuest(t.Context(), approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123}))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := fake.Guest(123); !ok || g.Lock != "clone" {
		t.Fatalf("guest 123 while the task runs = %+v, %v; want locked clone", g, ok)
	}
	// A second clone to the same VMID is refused from the fresh state.
	_, err = e.client.CloneGuest(t.Context(), approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9001}, NewID: 123}))
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "VMID 123 is already in use") {
		t.Fatalf("second clone: %v", err)
	}
	fake.FinishTasks()
	out, err := e.client.Verify(t.Context(), r, fastVerify())
	if err != nil || out.Status != proxmoxsafe.OutcomeCompleted {
		t.Fatalf("verify = %+v, %v", out, err)
	}
}
