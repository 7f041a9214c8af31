package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// provisionFixture: the demo cluster, provision enabled on pve1 and pve2.
func provisionFixture(t *testing.T, pv string) *fixture {
	t.Helper()
	pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassProvision}, ProtectedPools: []string{"databases"}}
	return newFixture(t, t.Context(), pv, fixtureConfig{policy: &pol})
}

// guest_clone without approval names the next free VMID in the phrase and
// sends nothing mutating; with the phrase and that newid it clones the
// template and proves the clone exists.
func TestGuestCloneTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := provisionFixture(t, pv)
			ctx := t.Context()
			args := map[string]any{"node": "pve2", "type": "qemu", "vmid": 105, "name": "web-03", "wait": true}
			res := f.call(t, ctx, ToolGuestClone, args)
			const phrase = "APPROVE clone pve2/qemu/105 newid=108 full=1 name=web-03"
			if !res.IsError || !strings.Contains(text(t, res), phrase) {
				t.Fatalf("without approval: %v %q", res.IsError, text(t, res))
			}
			if m := f.fake.MutatingRequests(); len(m) != 0 {
				t.Fatalf("mutating requests after a refusal: %v", m)
			}
			args["approval"], args["newid"] = phrase, 108
			res = f.call(t, ctx, ToolGuestClone, args)
			if res.IsError || !strings.Contains(text(t, res), "Clone of VM 105 (debian-13) on pve2 as VM 108 on pve2 completed OK") {
				t.Fatalf("clone: %q", text(t, res))
			}
			m := f.fake.MutatingRequests()
			if len(m) != 1 || m[0].Path != "/nodes/pve2/qemu/105/clone" || m[0].Form.Encode() != "full=1&name=web-03&newid=108" {
				t.Fatalf("mutating requests = %+v", m)
			}
			var r proxmoxsafe.Receipt
			structured(t, res, &r)
			if r.Task.Type != "qmclone" || r.NewGuest == nil || r.NewGuest.VMID != 108 || r.Outcome == nil || !r.Outcome.Verified {
				t.Errorf("receipt = %+v", r)
			}
			var events []string
			for _, rec := range f.audit.records(t) {
				events = append(events, string(rec.Event)+" "+string(rec.Op))
			}
			want := "refused CloneGuest,approved CloneGuest,submitted CloneGuest,completed CloneGuest"
			if got := strings.Join(events, ","); got != want {
				t.Errorf("audit = %s, want %s", got, want)
			}
		})
	}
}

// requiredPhrase is the phrase an approval refusal asks for ("" when
// absent).
func requiredPhrase(s string) string {
	_, rest, ok := strings.Cut(s, "approval set to exactly:\n")
	if !ok {
		return ""
	}
	phrase, _, _ := strings.Cut(rest, "\n")
	return phrase
}

// No provision tool takes a password: the input schemas refuse the
// property names a secret would travel in, before any request, and the
// refusal is audited.
func TestProvisionToolsRefusePasswords(t *testing.T) {
	t.Parallel()
	f := provisionFixture(t, "")
	ctx := t.Context()
	base := map[string]map[string]any{
		ToolContainerCreate: {"node": "pve1", "vmid": 151, "ostemplate": proxmoxtest.DemoTemplate, "hostname": "c1", "cores": 1, "memory": 512,
			"rootfs_storage": "local-lvm", "rootfs_size_gib": 8, "bridge": "vmbr0", "ip": "dhcp"},
		ToolVMCreate:   {"node": "pve1", "vmid": 150, "name": "app1", "cores": 2, "memory": 2048, "disk_storage": "local-lvm", "disk_size_gib": 20, "bridge": "vmbr0"},
		ToolGuestClone: {"node": "pve2", "type": "qemu", "vmid": 105, "newid": 150},
	}
	refused := 0
	for tool, args := range base {
		for _, key := range []string{"password", "cipassword", "root_password", "sshkeys", "ciuser"} {
			a := map[string]any{key: "hunter2hunter2"}
			for k, v := range args {
				a[k] = v
			}
			f.fake.ResetRequests()
			res := f.call(t, ctx, tool, a)
			if !res.IsError || !strings.Contains(text(t, res), key) || strings.Contains(text(t, res), "hunter2") {
				t.Errorf("%s with %s: %v %q", tool, key, res.IsError, text(t, res))
			}
			if r := f.fake.Requests(); len(r) != 0 {
				t.Errorf("%s with %s: requests %v", tool, key, r)
			}
			refused++
		}
	}
	recs := f.audit.records(t)
	if len(recs) != refused || slices.ContainsFunc(recs, func(r proxmoxsafe.AuditRecord) bool { return r.Event != proxmoxsafe.AuditRefused }) {
		t.Errorf("audit = %+v, want %d refusals", recs, refused)
	}
	for _, r := range recs {
		if strings.Contains(r.Reason, "hunter2") {
			t.Errorf("audit record quotes the secret: %+v", r)
		}
	}
}
