package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guest_migrate: an invalid target is refused before any request; the
// plan shows Proxmox's precheck and sends nothing mutating; without
// approval the refusal gives the phrase bound to the target and online;
// with it the VM moves, verified from the cluster resource list.
func TestGuestMigrateTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassMigrate}}
			f := newFixture(t, t.Context(), pv, fixtureConfig{policy: &pol})
			ctx := t.Context()
			res := f.call(t, ctx, ToolGuestMigrate, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "target": "pve1", "online": true})
			if txt := text(t, res); !res.IsError || !strings.Contains(txt, "target: must be another node") || !strings.Contains(txt, "no action was taken") {
				t.Fatalf("target = node: %v %q", res.IsError, txt)
			}
			if n := len(f.fake.Requests()); n != 0 {
				t.Fatalf("%d upstream requests after an invalid input", n)
			}
			args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "target": "pve2", "online": true, "plan": true}
			res = f.call(t, ctx, ToolGuestMigrate, args)
			txt := text(t, res)
			if res.IsError || !strings.Contains(txt, "Plan only") || !strings.Contains(txt, "precheck reports no blocker") || !strings.Contains(txt, "POST /nodes/pve1/qemu/100/migrate") {
				t.Fatalf("plan: %v %q", res.IsError, txt)
			}
			var r proxmoxsafe.Receipt
			structured(t, res, &r)
			if r.Plan == nil || r.Plan.Precheck == nil || !r.Plan.Precheck.Available || r.TargetNode != "pve2" {
				t.Errorf("plan receipt = %+v", r)
			}
			delete(args, "plan")
			args["wait"] = true
			res = f.call(t, ctx, ToolGuestMigrate, args)
			if txt := text(t, res); !res.IsError || !strings.Contains(txt, "APPROVE migrate pve1/qemu/100 target=pve2 online=1") {
				t.Fatalf("without approval: %v %q", res.IsError, txt)
			}
			if m := f.fake.MutatingRequests(); len(m) != 0 {
				t.Fatalf("mutating requests before approval: %v", m)
			}
			args["approval"] = "APPROVE migrate pve1/qemu/100 target=pve2 online=1"
			res = f.call(t, ctx, ToolGuestMigrate, args)
			if txt := text(t, res); res.IsError || !strings.Contains(txt, "Migration of VM 100") || !strings.Contains(txt, "on node pve2 (running)") {
				t.Fatalf("migrate: %v %q", res.IsError, txt)
			}
			m := f.fake.MutatingRequests()
			if len(m) != 1 || m[0].Method != "POST" || m[0].Path != "/nodes/pve1/qemu/100/migrate" || m[0].Form.Encode() != "online=1&target=pve2" {
				t.Fatalf("mutating requests = %+v", m)
			}
			structured(t, res, &r)
			if r.Task.Type != "qmigrate" || r.Outcome == nil || !r.Outcome.Verified || r.TargetNode != "pve2" {
				t.Errorf("receipt = %+v", r)
			}
			var events []string
			for _, rec := range f.audit.records(t) {
				events = append(events, string(rec.Event)+" "+string(rec.Op))
			}
			want := "refused MigrateGuest,refused MigrateGuest,approved MigrateGuest,submitted MigrateGuest,completed MigrateGuest"
			if got := strings.Join(events, ","); got != want {
				t.Errorf("audit = %s, want %s", got, want)
			}
		})
	}
}
