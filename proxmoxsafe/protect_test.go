package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The protections apply to every mutation class, not only the responder's.
func TestProtectionsApplyToEveryClass(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot, proxmoxsafe.ClassSnapshotAdmin}
	})
	ctx := t.Context()
	_, err := e.client.GuestPower(ctx, proxmoxsafe.GuestPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101},
		Action:   "stop",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("stop", guestTarget("pve1", "qemu", 101))},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "protected") {
		t.Errorf("GuestPower of a name-protected guest: %v", err)
	}
	snapT := proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 102, Snapshot: "s1"}
	_, err = e.client.SnapshotGuest(ctx, proxmoxsafe.SnapshotGuestInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 102},
		Name:     "s1",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("snapshot", snapT)},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "tag") {
		t.Errorf("SnapshotGuest of a tag-protected guest: %v", err)
	}
	delT := proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101, Snapshot: "auto1"}
	_, err = e.client.DeleteSnapshot(ctx, proxmoxsafe.DeleteSnapshotInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101},
		Name:     "auto1",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("delsnapshot", delT)},
	})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
		t.Errorf("DeleteSnapshot of a protected guest: %v", err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
	if n := len(auditSummary(t, e)); n != 3 {
		t.Errorf("audit records = %d, want 3 refusals", n)
	}
	// And GuestPower reboot has the uptime guard too.
	_, err = e.client.GuestPower(ctx, proxmoxsafe.GuestPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 104},
		Action:   "reboot",
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("reboot", guestTarget("pve1", "qemu", 104))},
	})
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "minimum uptime") {
		t.Errorf("GuestPower reboot under the minimum uptime: %v", err)
	}
}
