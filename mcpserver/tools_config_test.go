package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// disk_resize refuses without approval (the phrase names disk and size,
// nothing mutating is sent), then grows the disk with it, verified.
func TestDiskResizeTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := adminFixture(t, pv)
			ctx := t.Context()
			args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "disk": "scsi0", "size": "+16G", "wait": true}
			res := f.call(t, ctx, ToolDiskResize, args)
			if !res.IsError || !strings.Contains(text(t, res), "APPROVE resize pve1/qemu/100 disk=scsi0 size=+16G") || !strings.Contains(text(t, res), "from 64G to 80G") {
				t.Fatalf("without approval: %v %q", res.IsError, text(t, res))
			}
			if m := f.fake.MutatingRequests(); len(m) != 0 {
				t.Fatalf("mutating requests after a refusal: %v", m)
			}
			args["approval"] = "APPROVE resize pve1/qemu/100 disk=scsi0 size=+16G"
			res = f.call(t, ctx, ToolDiskResize, args)
			if res.IsError || !strings.Contains(text(t, res), "Resize of scsi0 64G → 80G of VM 100 (web-01) on pve1 completed OK: scsi0 is 80G") {
				t.Fatalf("resize: %q", text(t, res))
			}
			m := f.fake.MutatingRequests()
			if len(m) != 1 || m[0].Method != "PUT" || m[0].Path != "/nodes/pve1/qemu/100/resize" || m[0].Form.Get("size") != "+16G" || m[0].Form.Get("digest") == "" {
				t.Fatalf("mutating requests = %+v", m)
			}
			var r proxmoxsafe.Receipt
			structured(t, res, &r)
			if r.Task.Type != "resize" || r.Outcome == nil || !r.Outcome.Verified || len(r.Changes) != 1 || r.Changes[0].New != "80G" {
				t.Errorf("receipt = %+v", r)
			}
		})
	}
}

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
