package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestApprovalPhrase(t *testing.T) {
	t.Parallel()
	got := proxmoxsafe.ApprovalPhrase("shutdown", proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101})
	if got != "APPROVE shutdown pve1/qemu/101" {
		t.Errorf("power phrase = %q", got)
	}
	got = proxmoxsafe.ApprovalPhrase("snapshot", proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: "pre-up"})
	if got != "APPROVE snapshot pve1/lxc/200/pre-up" {
		t.Errorf("snapshot phrase = %q", got)
	}
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "s1", VMState: true, Description: "free text"}
	if got := in.ApprovalPhrase(); got != "APPROVE snapshot pve1/qemu/100/s1 vmstate=1" {
		t.Errorf("vmstate phrase = %q", got)
	}
	in.VMState = false
	if got := in.ApprovalPhrase(); got != "APPROVE snapshot pve1/qemu/100/s1" {
		t.Errorf("plain phrase = %q", got)
	}
}

func TestApprovalErrorTellsTheHuman(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)
	in.Approval = ""
	_, err := e.client.GuestPower(t.Context(), in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *ApprovalError", err)
	}
	if ae.Required != "APPROVE stop pve1/qemu/100" || ae.Given || ae.State.Status != "running" || ae.State.Name != "web1" {
		t.Errorf("approval error = %+v", ae)
	}
	if !strings.Contains(ae.Effect, "cut the power of VM 100 (web1) on pve1") {
		t.Errorf("effect = %q", ae.Effect)
	}
}
