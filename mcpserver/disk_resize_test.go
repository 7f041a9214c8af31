package mcpserver

import (
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
