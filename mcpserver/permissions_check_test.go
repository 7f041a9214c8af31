package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestPermissionsCheckScoping(t *testing.T) {
	t.Parallel()
	scoped := func(privs map[string][]string) func() *proxmoxtest.Cluster {
		return func() *proxmoxtest.Cluster {
			c := proxmoxtest.DemoCluster()
			c.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {Secret: proxmoxtest.DefaultTokenSecret, Privileges: privs}}
			return c
		}
	}
	for _, pv := range protocols {
		t.Run(protoName(pv)+"/well scoped", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), pv, fixtureConfig{cluster: scoped(map[string][]string{
				"/": {"Sys.Audit"}, "/vms": {"VM.Audit", "VM.PowerMgmt", "VM.Snapshot", "VM.Backup", "VM.GuestAgent.Audit"},
				"/storage": {"Datastore.Audit", "Datastore.AllocateSpace"},
			})()})
			res := f.call(t, t.Context(), ToolPermissionsCheck, nil)
			var out PermissionsCheckResult
			structured(t, res, &out)
			if !out.OK || out.Dangerous || len(out.Excess) != 0 || len(out.Missing) != 0 {
				t.Errorf("out = %+v", out)
			}
			if msg := text(t, res); strings.Contains(msg, "WARNING") || strings.Contains(msg, "Missing") {
				t.Errorf("text = %q", msg)
			}
		})
		t.Run(protoName(pv)+"/missing", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), pv, fixtureConfig{cluster: scoped(map[string][]string{"/vms": {"VM.Audit"}})()})
			res := f.call(t, t.Context(), ToolPermissionsCheck, nil)
			var out PermissionsCheckResult
			structured(t, res, &out)
			if out.OK {
				t.Fatal("ok with missing privileges")
			}
			byTool := map[string]ToolPermission{}
			for _, tp := range out.Tools {
				byTool[tp.Tool] = tp
			}
			if !byTool[ToolListGuests].OK || byTool[ToolClusterStatus].OK || byTool[ToolGuestPower].OK {
				t.Errorf("per tool = %+v", byTool)
			}
			msg := text(t, res)
			for _, w := range []string{"lack privileges", "Missing Sys.Audit on /nodes/pve1: pveum acl modify /nodes/pve1 --tokens 'automation@pve!mcp' --roles ProxmoxSafeMCP", "Create the role first: pveum role add ProxmoxSafeMCP"} {
				if !strings.Contains(msg, w) {
					t.Errorf("text %q lacks %q", msg, w)
				}
			}
		})
		t.Run(protoName(pv)+"/read-only server", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{ReadOnly: true}, cluster: scoped(map[string][]string{
				"/": {"Sys.Audit"}, "/vms": {"VM.Audit", "VM.PowerMgmt"}, "/storage": {"Datastore.Audit"}})()})
			var out PermissionsCheckResult
			structured(t, f.call(t, t.Context(), ToolPermissionsCheck, nil), &out)
			for _, tp := range out.Tools {
				if tp.Tool == ToolGuestPower {
					t.Error("a hidden mutation tool is checked")
				}
			}
			// VM.PowerMgmt is not needed by any offered tool.
			if !slices.ContainsFunc(out.Excess, func(x proxmoxsafe.ExcessPrivilege) bool { return x.Privilege == "VM.PowerMgmt" }) {
				t.Errorf("excess = %+v", out.Excess)
			}
		})
	}
}
