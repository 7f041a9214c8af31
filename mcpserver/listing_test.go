package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestEmptyNodeAllowlistHidesMutations: every mutation needs an allowlisted
// node, so with none the mutation tools are not listed (the README says
// tools the policy does not allow are not even listed).
func TestEmptyNodeAllowlistHidesMutations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pol := proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot}}
	f := newFixture(t, ctx, "", fixtureConfig{policy: &pol})
	for _, ti := range Tools(f.client, nil) {
		if !ti.ReadOnly() {
			t.Errorf("Tools lists %s with an empty node allowlist", ti.Name)
		}
	}
	lt, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		if tool.Name == ToolGuestPower || tool.Name == ToolSnapshotGuest {
			t.Errorf("tools/list offers %s with an empty node allowlist", tool.Name)
		}
	}
	if len(lt.Tools) == 0 {
		t.Error("no read tools listed")
	}

	pol.AllowedNodes = []string{"pve1"}
	withNode := newFixture(t, ctx, "", fixtureConfig{policy: &pol})
	found := false
	for _, ti := range Tools(withNode.client, nil) {
		found = found || ti.Name == ToolGuestPower
	}
	if !found {
		t.Error("guest_power not listed once a node is allowed")
	}
}
