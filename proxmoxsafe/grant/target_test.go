package grant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// TestTargetText: a grant names its guest, or for a request that names
// none its path (its action is the method); never the zero guest's "//0". The refusal
// that hands out the code says the same.
func TestTargetText(t *testing.T) {
	t.Parallel()
	gw := &proxmoxsafe.Plan{Class: proxmoxsafe.ClassGatewayWrite, Method: "DELETE", Path: "/cluster/ha/groups/web"}
	for _, tc := range []struct {
		g    grant.Grant
		want string
	}{
		{grant.Grant{Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100}}, "pve1/qemu/100"},
		{grant.Grant{Action: "snapshot", Target: proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: "s1"}}, "pve1/lxc/200/s1"},
		{grant.Grant{Action: "DELETE", Plan: gw}, "/cluster/ha/groups/web"},
		{grant.Grant{Action: "POST"}, "(none)"},
	} {
		if got := tc.g.TargetText(); got != tc.want {
			t.Errorf("TargetText of %+v = %q, want %q", tc.g.Target, got, tc.want)
		}
	}
	g := grant.Grant{Code: "K7QF-3MZD", Action: "DELETE", Plan: gw, Effect: "send DELETE /cluster/ha/groups/web with no parameters", Expires: time.Now()}
	msg := (&grant.RequiredError{Grant: g}).Error()
	if !strings.Contains(msg, "Plan: DELETE on /cluster/ha/groups/web;") || strings.Contains(msg, "//0") {
		t.Errorf("refusal = %q, want it to name the request, not //0", msg)
	}
}

// TestTargetLabel: the operator's views name the guest as it was read
// beside its target; a grant without a guest reads as TargetText.
func TestTargetLabel(t *testing.T) {
	t.Parallel()
	named := grant.Grant{Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101}, Guest: proxmoxsafe.GuestState{Name: "web1"}}
	if got := named.TargetLabel(); got != "pve1/qemu/101 (web1)" {
		t.Errorf("TargetLabel = %q", got)
	}
	gw := grant.Grant{Action: "DELETE", Plan: &proxmoxsafe.Plan{Path: "/pools/x"}, Guest: proxmoxsafe.GuestState{Name: "ignored"}}
	if got := gw.TargetLabel(); got != "/pools/x" {
		t.Errorf("TargetLabel of a gateway grant = %q", got)
	}
}
