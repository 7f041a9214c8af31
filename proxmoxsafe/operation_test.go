package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestOperationInfoAccessors: Operations returns copies (a caller that
// edits one cannot change the declarations); Action and ActionNames read
// the declared actions in order; ActionRisk gives the declaring
// operation's risk line, and the generic line for an undeclared action.
func TestOperationInfoAccessors(t *testing.T) {
	t.Parallel()
	find := func(ops []proxmoxsafe.OperationInfo, name proxmoxsafe.Operation) proxmoxsafe.OperationInfo {
		t.Helper()
		i := slices.IndexFunc(ops, func(o proxmoxsafe.OperationInfo) bool { return o.Name == name })
		if i < 0 {
			t.Fatalf("%s is not in Operations()", name)
		}
		return ops[i]
	}
	power := find(proxmoxsafe.Operations(), proxmoxsafe.OpGuestPower)
	names := power.ActionNames()
	if len(names) == 0 || len(names) != len(power.Actions) {
		t.Fatalf("GuestPower declares actions %v", names)
	}
	for i, n := range names {
		a, ok := power.Action(n)
		if !ok || a != power.Actions[i] {
			t.Errorf("Action(%q) = %+v, %v; want the declared %+v", n, a, ok, power.Actions[i])
		}
	}
	if _, ok := power.Action("frobnicate"); ok {
		t.Error("Action found an action GuestPower does not declare")
	}
	stop, _ := power.Action("stop")
	if got := proxmoxsafe.ActionRisk("stop"); got != stop.Risk || got == "" {
		t.Errorf("ActionRisk(stop) = %q, want GuestPower's %q", got, stop.Risk)
	}
	if got := proxmoxsafe.ActionRisk("frobnicate"); got != "review the effect above." {
		t.Errorf("ActionRisk of an undeclared action = %q", got)
	}

	power.Actions[0].Risk = "changed"
	power.Privileges = append(power.Privileges[:0], proxmoxsafe.Privilege{Path: "/", Name: "Changed"})
	again := find(proxmoxsafe.Operations(), proxmoxsafe.OpGuestPower)
	if again.Actions[0].Risk == "changed" || again.Privileges[0].Name == "Changed" {
		t.Error("editing a returned OperationInfo changed the declaration")
	}
}
