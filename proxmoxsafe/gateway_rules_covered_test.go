package proxmoxsafe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// coveredEnv is gatewayEnv with the destroy and power classes at the
// grant level, as in the finding: the gateway, approved by the phrase,
// must not send what those classes would have a person approve.
func coveredEnv(t *testing.T) *env {
	t.Helper()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return gatewayEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassDestroy)
		c.Policy.Approvals[proxmoxsafe.ClassDestroy] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelGrant}
		c.Policy.Approvals[proxmoxsafe.ClassPower] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelGrant}
		c.Approvers = []proxmoxsafe.Approver{store}
	})
}

// TestGatewayCoveredRoutesRefused: a gateway write that a dedicated
// operation sends is refused, with its exact phrase, naming the operation
// and its class: a DELETE of a guest with destroy=grant went out once the
// gateway's own level approved it, skipping every precondition of the
// destroy class; a stop the same way. Nothing is sent (not even the
// protection read), one refused record is written.
func TestGatewayCoveredRoutesRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		params       map[string]string
		mention      string
	}{
		{"DELETE", "/nodes/pve2/qemu/103", nil, "DestroyGuest (class destroy, approved by grant)"},
		{"DELETE", "/nodes/pve1/lxc/200", map[string]string{"purge": "1"}, "DestroyGuest"},
		{"POST", "/nodes/pve1/qemu/100/status/stop", nil, "GuestPower (class power, approved by grant)"},
		{"POST", "/nodes/pve1/qemu/100/status/reboot", nil, "GuestPower (class power, approved by grant), RebootGuest (class responder, not enabled by the operator)"},
		// The same route by another write method or spelling.
		{"PUT", "/nodes/pve1/qemu/101/config", map[string]string{"cores": "4"}, "SetGuestConfig (class config, not enabled"},
		{"POST", "/NODES/pve1/QEMU/101/snapshot", map[string]string{"snapname": "x1"}, "SnapshotGuest"},
		// A power action no operation offers, on the operations' route.
		{"POST", "/nodes/pve1/lxc/200/status/suspend", nil, "GuestPower"},
		// Equivalent by another route: the HA manager acts on the guest.
		{"PUT", "/cluster/ha/resources/vm:105", map[string]string{"state": "stopped"}, "GuestPower"},
		{"POST", "/cluster/ha/resources", map[string]string{"sid": "vm:101"}, "a new resource is started unless its state is ignored"},
		{"POST", "/cluster/ha/resources/vm:105/migrate", map[string]string{"node": "pve1"}, "MigrateGuest"},
		{"POST", "/cluster/ha/resources/ct:201/relocate", map[string]string{"node": "pve1"}, "MigrateGuest"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			e := coveredEnv(t)
			in := proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: tc.params,
				Approval: exactGatewayPhrase(tc.method, tc.path, tc.params)}
			_, err := e.client.APIRequest(t.Context(), in)
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, tc.mention, true)
			if !strings.Contains(err.Error(), "use the operation instead") {
				t.Errorf("err = %v, want it to point to the operation", err)
			}
			in.Approval, in.Plan = "", true
			if res, err := e.client.APIRequest(t.Context(), in); err == nil {
				t.Errorf("plan = %+v, want the same refusal", res)
			}
			if got := proxmoxsafe.GatewayCoveredBy(in); len(got) == 0 {
				t.Errorf("GatewayCoveredBy = %v, want the operation", got)
			}
		})
	}
}

// TestGatewayCoversEveryDeclaredMutation: the covered routes are the
// declarations' own, so every mutation declared in the one list (and any
// added later) is refused through the gateway with every write method,
// naming it (or by the deny list, which comes first); nothing reaches the
// fake.
func TestGatewayCoversEveryDeclaredMutation(t *testing.T) {
	t.Parallel()
	e := coveredEnv(t)
	fill := strings.NewReplacer("{node}", "pve1", "{type}", "qemu", "{vmid}", "101", "{snapname}", "s1", "{action}", "start", "{storage}", "local", "{volume}", "x")
	n := 0
	for _, info := range proxmoxsafe.Operations() {
		if info.Class == "" || info.Class == proxmoxsafe.ClassGateway || info.Class == proxmoxsafe.ClassGatewayWrite || info.Method == "GET" {
			continue
		}
		path := fill.Replace(info.Route)
		for _, method := range []string{"POST", "PUT", "DELETE"} {
			in := proxmoxsafe.APIRequestInput{Method: method, Path: path, Approval: exactGatewayPhrase(method, path, nil)}
			_, err := e.client.APIRequest(t.Context(), in)
			// A route the deny list holds too (storage volumes) is refused
			// by the deny list first.
			if err == nil || !strings.Contains(err.Error(), string(info.Name)) && !strings.Contains(err.Error(), "deny list") {
				t.Errorf("%s %s (%s): err = %v, want refused naming %s", method, path, info.Name, err, info.Name)
			}
			if !slices.Contains(proxmoxsafe.GatewayCoveredBy(in), info.Name) {
				t.Errorf("%s %s: GatewayCoveredBy = %v, want %s", method, path, proxmoxsafe.GatewayCoveredBy(in), info.Name)
			}
			n++
		}
	}
	if n < 3*15 {
		t.Errorf("%d requests checked, want every declared mutation's", n)
	}
	if got := e.requests(); len(got) != 0 {
		t.Errorf("requests = %v, want none", reqLines(got))
	}
}

// TestGatewayNotCovered: what no operation covers is not refused as
// covered (a guest's firewall, HA groups, an HA resource left to itself,
// a task's path), and GatewayCoveredBy says so.
func TestGatewayNotCovered(t *testing.T) {
	t.Parallel()
	for _, in := range []proxmoxsafe.APIRequestInput{
		{Method: "POST", Path: "/nodes/pve1/qemu/101/firewall/rules"},
		{Method: "POST", Path: "/cluster/ha/groups", Params: map[string]string{"group": "g1"}},
		{Method: "POST", Path: "/cluster/ha/resources", Params: map[string]string{"sid": "vm:101", "state": "ignored"}},
		{Method: "PUT", Path: "/cluster/ha/resources/vm:105", Params: map[string]string{"comment": "x"}},
		{Method: "DELETE", Path: "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:6745A2B0:qmstart:101:root@pam:"},
		{Method: "PUT", Path: "/nodes/pve1/qemu/101/cloudinit"},
	} {
		if got := proxmoxsafe.GatewayCoveredBy(in); got != nil {
			t.Errorf("%s %s: GatewayCoveredBy = %v, want none", in.Method, in.Path, got)
		}
	}
}

// TestGatewayEquivalentsDenied: requests equivalent to a denied route or
// to a config never-key are refused whatever the approval: applying SDN
// (every node's network, while a node's network is denied), unlinking an
// unused disk (deletes the volume), converting to a template, moving a
// disk; container features and the protection flag, wherever they are
// sent. Nothing reaches the fake.
func TestGatewayEquivalentsDenied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		params       map[string]string
		mention      string
	}{
		{"PUT", "/cluster/sdn", nil, "deny list (/cluster/sdn"},
		{"PUT", "/nodes/pve1/qemu/101/unlink", map[string]string{"idlist": "unused0", "force": "1"}, "deny list (/nodes/*/qemu|lxc/*/unlink"},
		{"PUT", "/nodes/pve1/lxc/200/unlink", map[string]string{"idlist": "unused0"}, "deny list"},
		{"POST", "/nodes/pve1/qemu/101/template", nil, "deny list (/nodes/*/qemu|lxc/*/template"},
		{"POST", "/nodes/pve1/qemu/101/move_disk", map[string]string{"disk": "scsi0", "storage": "local", "delete": "1"}, "deny list"},
		{"POST", "/nodes/pve1/lxc/200/move_volume", map[string]string{"volume": "rootfs", "storage": "local"}, "deny list"},
		{"PUT", "/nodes/pve1/lxc/200/config", map[string]string{"features": "nesting=1,keyctl=1"}, "parameter features is never sent"},
		{"POST", "/nodes/pve1/qemu/101/config", map[string]string{"delete": "protection"}, "protection is a config key no policy allows"},
		{"PUT", "/nodes/pve1/lxc/200/config", map[string]string{"delete": "cores;protection"}, "protection is a config key no policy allows"},
		{"PUT", "/nodes/pve1/lxc/200/config", map[string]string{"protection": "0"}, "parameter protection is never sent"},
		{"POST", "/nodes/pve1/qemu/101/config", map[string]string{"revert": "unused0"}, "unused0 is a config key no policy allows"},
		{"POST", "/nodes/pve1/qemu/101/firewall/rules", map[string]string{"lock": "backup"}, "parameter lock is never sent"},
	} {
		t.Run(tc.method+" "+tc.path+" "+strings.Join(keysOf(tc.params), ","), func(t *testing.T) {
			t.Parallel()
			e := coveredEnv(t)
			_, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: tc.params,
				Approval: exactGatewayPhrase(tc.method, tc.path, tc.params)})
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, tc.mention, true)
		})
	}
}
