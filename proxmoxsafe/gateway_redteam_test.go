package proxmoxsafe_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestGatewayWriteOtherSpellings: a gateway write reaches a protected
// guest, or a node off the allowlist, through spellings Proxmox accepts
// besides /nodes/{node}/{type}/{vmid}, vmid and target: an HA resource id
// given as a bare VMID (pve-ha-manager parse_sid takes "106" for
// "vm:106"), VMID lists (pool membership "vms", HA rule "resources",
// backup "vmid"), a replication job id "106-0", a task's UPID (stopping
// a migration of the guest), and node lists ("nodes"
// of HA groups and rules, with priorities). Each is refused with zero
// upstream requests (guest 106 is protected by VMID, pve3 is off the
// allowlist).
func TestGatewayWriteOtherSpellings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path string
		params             map[string]string
		mention            string
	}{
		{"HA resource as a bare VMID in the path", "PUT", "/cluster/ha/resources/106", map[string]string{"comment": "x"}, "guest 106 is protected"},
		{"HA migrate of a bare VMID", "POST", "/cluster/ha/resources/106/migrate", map[string]string{"node": "pve2"}, "has the effect of a dedicated operation (the HA manager migrates the guest): MigrateGuest"},
		{"HA resource removed by bare VMID", "DELETE", "/cluster/ha/resources/106", nil, "guest 106 is protected"},
		{"pool membership moves the guest", "PUT", "/pools/other", map[string]string{"vms": "101,106", "allow-move": "1"}, "guest 106 is protected"},
		{"HA rule names the guest in a list", "POST", "/cluster/ha/rules", map[string]string{"rule": "r1", "type": "node-affinity", "resources": "vm:101,vm:106", "nodes": "pve2"}, "guest 106 is protected"},
		{"backup job for a VMID list", "POST", "/cluster/backup", map[string]string{"vmid": "101,106", "schedule": "daily"}, "guest 106 is protected"},
		{"replication job id", "POST", "/cluster/replication", map[string]string{"id": "106-0", "target": "pve2", "type": "local"}, "guest 106 is protected"},
		{"replication job in the path", "DELETE", "/cluster/replication/106-0", nil, "guest 106 is protected"},
		{"a task of the guest stopped", "DELETE", "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:6745A2B0:qmigrate:106:root@pam:", nil, "guest 106 is protected"},
		{"HA group on a node off the allowlist", "POST", "/cluster/ha/groups", map[string]string{"group": "g1", "nodes": "pve1:2,pve3:1"}, `node "pve3"`},
		{"HA rule on a node off the allowlist", "PUT", "/cluster/ha/rules/r1", map[string]string{"nodes": "pve3"}, `node "pve3"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			in := proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: tc.params}
			var err error
			if in.Approval, err = proxmoxsafe.GatewayPhrase(in); err != nil {
				t.Fatal(err)
			}
			_, err = e.client.APIRequest(t.Context(), in)
			if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err = %v, want a refusal naming %q", err, tc.mention)
			}
			if got := e.requests(); len(got) != 0 {
				t.Errorf("upstream requests = %v, want none", reqLines(got))
			}
		})
	}
}

// TestGatewayWriteApproverSeesEveryParameter: what a person approves
// (the plan's effect, shown by the elicitation form, the approval page and
// "approve CODE") names every parameter in full, or the write is refused
// before any approval. A model cannot push a parameter past the cut of a
// long effect, hide the end of a value behind a per-value cap, or send
// characters the approver does not see (BiDi, zero-width).
func TestGatewayWriteApproverSeesEveryParameter(t *testing.T) {
	t.Parallel()
	// The end of a long value (a property string) must be shown.
	long := "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=0,link_down=0,mtu=1500,queues=4,rate=0,tag=666"
	e := gatewayEnv(t, nil)
	in := proxmoxsafe.APIRequestInput{Method: "PUT", Path: "/nodes/pve1/qemu/101/cloudinit", Params: map[string]string{"net0": long}, Plan: true}
	res, err := e.client.APIRequest(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Plan.Effect, long) {
		t.Errorf("effect %q does not show net0 in full (%q)", res.Plan.Effect, long)
	}
	// Too much to show: refused before approval, nothing sent.
	many := map[string]string{}
	for _, k := range []string{"acpi", "agent", "balloon", "bios", "boot", "cores", "cpu", "cpulimit", "cpuunits", "description", "kvm", "memory", "name", "numa", "onboot", "protection"} {
		many[k] = strings.Repeat("1", 40)
	}
	invisible := map[string]string{"description": "safe\u202e0=noitcetorp"}
	for name, params := range map[string]map[string]string{"too long to show": many, "invisible characters": invisible} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			in := proxmoxsafe.APIRequestInput{Method: "PUT", Path: "/nodes/pve1/qemu/101/cloudinit", Params: params}
			var err error
			if in.Approval, err = proxmoxsafe.GatewayPhrase(in); err != nil {
				t.Fatal(err)
			}
			_, err = e.client.APIRequest(t.Context(), in)
			if !errors.Is(err, proxmoxsafe.ErrInvalidInput) || !strings.Contains(err.Error(), "approver") {
				t.Fatalf("err = %v, want an invalid-input refusal saying the approver could not see it", err)
			}
			if got := e.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests = %v, want none", reqLines(got))
			}
		})
	}
}

// TestGatewayWriteApproverSeesWhiteSpace: two writes that send different
// bytes show the approver different effects and plans. A value's line
// breaks, tabs and leading or trailing spaces are sent as they are (the
// digest covers them), so the effect shows them (quoted, escaped) instead
// of folding them to one line: "x\n" and " x" are not the "x" a person
// would read, nor "a\nb" the "a b".
func TestGatewayWriteApproverSeesWhiteSpace(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	shown := func(v string) (effect, param string) {
		t.Helper()
		in := proxmoxsafe.APIRequestInput{Method: "PUT", Path: "/nodes/pve1/qemu/101/cloudinit", Params: map[string]string{"description": v}, Plan: true}
		res, err := e.client.APIRequest(t.Context(), in)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		return res.Plan.Effect, res.Plan.Params["description"]
	}
	for _, pair := range [][2]string{{"x", "x\n"}, {"x", " x"}, {"x", "x "}, {"a b", "a\nb"}, {"a b", "a\tb"}, {"a b", "a\n\nb"}} {
		e1, p1 := shown(pair[0])
		e2, p2 := shown(pair[1])
		if e1 == e2 {
			t.Errorf("%q and %q both show the effect %q", pair[0], pair[1], e1)
		}
		if p1 == p2 {
			t.Errorf("%q and %q both show the plan parameter %q", pair[0], pair[1], p1)
		}
	}
	if effect, _ := shown("a\nb"); !strings.Contains(effect, `description="a\nb"`) {
		t.Errorf("effect %q, want the line break shown escaped in quotes", effect)
	}
	if got := e.fake.MutatingRequests(); len(got) != 0 {
		t.Errorf("mutating requests = %v, want none", reqLines(got))
	}
}

// TestAPIGetTaskLogRedacts: a task log read through the gateway is
// redacted like task_log's: command lines in task logs quote passwords
// and tokens (FACTS §9), and the gateway must not be the way around
// TaskLog's redaction.
func TestAPIGetTaskLogRedacts(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	task := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", ExitStatus: "OK", Log: []string{
		"qm set 100 --cipassword hunter2-CANARY --ciuser admin",
		"login with api_token=abc123-CANARY and password: 'pa ss-CANARY' done",
		"env DB_PASS=dragon-CANARY curl -H 'x-api-key: k3y-CANARY' --psk wifi-CANARY --pwd=p-CANARY",
		`{"private_key":"MIIE-CANARY","otp":"123456-CANARY","passphrase":"horse-CANARY"}`,
		"qm set 100 --bypass 1 --passthrough on, passive: yes",
	}})
	res, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/tasks/" + task.UPID + "/log"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Data)
	if strings.Contains(string(b), "CANARY") || !strings.Contains(string(b), "--ciuser admin") ||
		!strings.Contains(string(b), "qm set 100 --bypass 1 --passthrough on, passive: yes") {
		t.Errorf("task log through the gateway = %s, want the secrets redacted and the rest kept", b)
	}
	if want := []string{"data[0].t", "data[1].t", "data[2].t", "data[3].t"}; !slices.Equal(res.Redacted, want) {
		t.Errorf("redacted = %v, want %v (the look-alike line kept)", res.Redacted, want)
	}
}
