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

// TestVerifyProvisionReceiptWithoutNewGuest: a receipt built by hand that
// names a clone or a create without its new guest is refused as invalid,
// before any read, whether or not it says it was applied synchronously
// (a synchronous receipt skips the task checks; it used to reach the new
// guest's nil pointer and panic).
func TestVerifyProvisionReceiptWithoutNewGuest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    proxmoxsafe.Receipt
	}{
		{"synchronous clone", proxmoxsafe.Receipt{Action: "clone", Synchronous: true,
			Target: proxmoxsafe.Target{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 9000}}},
		{"synchronous create", proxmoxsafe.Receipt{Action: "create", Synchronous: true,
			Target: proxmoxsafe.Target{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 123}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, provisionCluster(), func(c *proxmoxsafe.Config) {
				c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassProvision}}
			})
			e.fake.ResetRequests()
			_, err := e.client.Verify(t.Context(), &tc.r, fastVerify())
			var ve *proxmoxsafe.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), "new_guest") {
				t.Fatalf("Verify = %v; want a ValidationError naming new_guest", err)
			}
			if reqs := e.fake.Requests(); len(reqs) != 0 {
				t.Fatalf("Verify of an invalid receipt sent %d request(s): %+v", len(reqs), reqs)
			}
		})
	}
}
