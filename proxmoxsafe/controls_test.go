package proxmoxsafe_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestControlsFlat: the embedded GuestRef and Controls keep an input's
// JSON flat, with the names Proxmox and the tools use, and Wait out of it.
func TestControlsFlat(t *testing.T) {
	t.Parallel()
	in := proxmoxsafe.GuestPowerInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStop,
		Controls: proxmoxsafe.Controls{Approval: "APPROVE stop pve1/qemu/101", Plan: true, Wait: &proxmoxsafe.WaitOptions{}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"node":"pve1","type":"qemu","vmid":101,"action":"stop","approval":"APPROVE stop pve1/qemu/101","plan":true}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	var back proxmoxsafe.GuestPowerInput
	if err := json.Unmarshal(b, &back); err != nil || back.Approval != in.Approval || !back.Plan || back.Node != "pve1" || back.Wait != nil {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if c := back.MutationControls(); c != &back.Controls {
		t.Error("MutationControls does not return the input's own controls")
	}
}

// TestControlsApprovalLimit: one Controls type, each input's limit, with
// the problem and rule a max tag gives.
func TestControlsApprovalLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    any
		limit int
		set   func(any, string) any
	}{
		{proxmoxsafe.GuestPowerInput{}, proxmoxsafe.MaxApprovalLen, func(v any, a string) any {
			in := v.(proxmoxsafe.GuestPowerInput)
			in.GuestRef, in.Action, in.Approval = proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, "stop", a
			return in
		}},
		{proxmoxsafe.CreateVMInput{}, proxmoxsafe.MaxProvisionApprovalLen, func(v any, a string) any {
			in := proxmoxsafe.CreateVMInput{Node: "pve1", VMID: 130, Name: "web9", Cores: 2, MemoryMiB: 2048, DiskStorage: "local-lvm", DiskSizeGiB: 32, Bridge: "vmbr0"}
			in.Approval = a
			return in
		}},
		{proxmoxsafe.SetGuestConfigInput{}, proxmoxsafe.MaxConfigApprovalLen, func(v any, a string) any {
			in := proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Set: map[string]string{"cores": "2"}}
			in.Approval = a
			return in
		}},
	} {
		if got := proxmoxsafe.MaxApprovalLenOf(tc.in); got != tc.limit {
			t.Errorf("MaxApprovalLenOf(%T) = %d, want %d", tc.in, got, tc.limit)
		}
		if err := proxmoxsafe.Validate(tc.set(tc.in, strings.Repeat("é", tc.limit))); err != nil {
			t.Errorf("%T: an approval of %d characters: %v", tc.in, tc.limit, err)
		}
		err := proxmoxsafe.Validate(tc.set(tc.in, strings.Repeat("é", tc.limit+1)))
		var ve *proxmoxsafe.ValidationError
		if !errors.As(err, &ve) || len(ve.Fields) != 1 || ve.Fields[0].Field != "approval" || ve.Fields[0].Rule != "max" ||
			!strings.Contains(ve.Fields[0].Problem, "at most") {
			t.Errorf("%T: an approval of %d characters: %v, want one max refusal of approval", tc.in, tc.limit+1, err)
		}
	}
}
