package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guest_config_set: a container's change is applied before Proxmox
// answers (no task, said so); a running VM's cores are reported pending;
// a never-key is refused before any request.
func TestGuestConfigSetTool(t *testing.T) {
	t.Parallel()
	f := adminFixture(t, "")
	ctx := t.Context()
	res := f.call(t, ctx, ToolGuestConfigSet, map[string]any{"node": "pve1", "type": "lxc", "vmid": 200, "set": map[string]any{"cores": "2"},
		"approval": "APPROVE config pve1/lxc/200 cores=2", "wait": true})
	if res.IsError || !strings.Contains(text(t, res), "completed OK: applied: cores=2 (task none: Proxmox applied it before answering)") {
		t.Fatalf("container: %q", text(t, res))
	}
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if !r.Synchronous || r.UPID != "" || r.Outcome == nil || !r.Outcome.Verified {
		t.Errorf("container receipt = %+v", r)
	}
	m := f.fake.MutatingRequests()
	if len(m) != 1 || m[0].Method != "PUT" || m[0].Path != "/nodes/pve1/lxc/200/config" || m[0].Form.Get("cores") != "2" {
		t.Fatalf("mutating requests = %+v", m)
	}

	res = f.call(t, ctx, ToolGuestConfigSet, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "set": map[string]any{"cores": "8", "tags": "web;prod;new"},
		"approval": "APPROVE config pve1/qemu/100 cores=8 tags=new;prod;web", "wait": true})
	if res.IsError || !strings.Contains(text(t, res), "applied: tags=new;prod;web; pending until the guest's next start (not applied yet): cores=8") {
		t.Fatalf("VM: %q", text(t, res))
	}
	structured(t, res, &r)
	if r.Task.Type != "qmconfig" || r.Outcome == nil || !slices.Equal(r.Outcome.Pending, []string{"cores"}) {
		t.Errorf("VM receipt = %+v", r)
	}

	before := len(f.fake.Requests())
	for _, key := range []string{"args", "hostpci0", "lxc.apparmor.profile", "cipassword"} {
		res = f.call(t, ctx, ToolGuestConfigSet, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "set": map[string]any{key: "x"}})
		if !res.IsError || !strings.Contains(text(t, res), "never") {
			t.Errorf("%s: %v %q", key, res.IsError, text(t, res))
		}
	}
	if n := len(f.fake.Requests()) - before; n != 0 {
		t.Errorf("%d upstream requests after never-key refusals", n)
	}
}
