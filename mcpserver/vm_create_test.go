package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// vm_create and container_create with plan: true send nothing mutating
// and return the exact phrase; with it they create, and the guest reads
// back as requested.
func TestCreateTools(t *testing.T) {
	t.Parallel()
	f := provisionFixture(t, "")
	ctx := t.Context()
	vm := map[string]any{"node": "pve1", "vmid": 150, "name": "app1", "cores": 2, "memory": 2048, "disk_storage": "local-lvm", "disk_size_gib": 20,
		"bridge": "vmbr0", "iso": proxmoxtest.DemoISO, "plan": true}
	res := f.call(t, ctx, ToolVMCreate, vm)
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if res.IsError || r.Plan == nil || r.Plan.Path != "/nodes/pve1/qemu" || len(f.fake.MutatingRequests()) != 0 {
		t.Fatalf("plan: %q, %+v", text(t, res), r.Plan)
	}
	delete(vm, "plan")
	vm["approval"], vm["wait"] = r.Plan.Approval, true
	res = f.call(t, ctx, ToolVMCreate, vm)
	if res.IsError || !strings.Contains(text(t, res), "completed OK") {
		t.Fatalf("vm_create: %q", text(t, res))
	}
	ct := map[string]any{"node": "pve1", "vmid": 151, "ostemplate": proxmoxtest.DemoTemplate, "hostname": "c1", "cores": 1, "memory": 512,
		"rootfs_storage": "local-lvm", "rootfs_size_gib": 8, "bridge": "vmbr0", "ip": "dhcp",
		"ssh_public_keys": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7yT0b5X4JmEqwG0w3uHcYlOqz2w0u1n1y5Kq3bQZpA ops", "wait": true}
	res = f.call(t, ctx, ToolContainerCreate, ct)
	if !res.IsError || !strings.Contains(text(t, res), "APPROVE create pve1/lxc/151 ostemplate="+proxmoxtest.DemoTemplate) {
		t.Fatalf("container_create without approval: %q", text(t, res))
	}
	ct["approval"] = requiredPhrase(text(t, res))
	res = f.call(t, ctx, ToolContainerCreate, ct)
	if res.IsError || !strings.Contains(text(t, res), "completed OK") {
		t.Fatalf("container_create: %q (approval %q)", text(t, res), ct["approval"])
	}
	m := f.fake.MutatingRequests()
	if len(m) != 2 || m[0].Path != "/nodes/pve1/qemu" || m[1].Path != "/nodes/pve1/lxc" || m[1].Form.Get("unprivileged") != "1" || m[1].Form.Has("password") {
		t.Errorf("mutating requests = %+v", m)
	}
}

// A pool the operator protects is refused for a new guest.
func TestCreateIntoProtectedPool(t *testing.T) {
	t.Parallel()
	f := provisionFixture(t, "")
	res := f.call(t, t.Context(), ToolVMCreate, map[string]any{"node": "pve1", "vmid": 150, "name": "app1", "cores": 2, "memory": 2048,
		"disk_storage": "local-lvm", "disk_size_gib": 20, "bridge": "vmbr0", "pool": "databases"})
	if !res.IsError || !strings.Contains(text(t, res), `pool "databases"`) {
		t.Fatalf("result %v %q", res.IsError, text(t, res))
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}
