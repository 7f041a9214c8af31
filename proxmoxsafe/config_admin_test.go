package proxmoxsafe_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// newConfigEnv: the demo cluster (103 stopped VM on pve2 with a 100G
// scsi0, 8 cores, 16384 MiB; 100 running VM on pve1; 200 running
// container on pve1 with an 8G rootfs; 102 locked; 105 a template), only
// the config class enabled on pve1 and pve2.
func newConfigEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnvWith(t, canaryDemo(), func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1", "pve2"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassConfig},
		}
		if mod != nil {
			mod(c)
		}
	})
}

// canaryDemo is the demo cluster with the canary token, so every test's
// cleanup checks that the secret reached no log and no audit record.
func canaryDemo() *proxmoxtest.Cluster {
	c := proxmoxtest.DemoCluster()
	c.Tokens = map[string]*proxmoxtest.Token{
		"automation@pve!mcp": {Secret: canary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
	}
	return c
}

// configDigest reads the guest's config digest as the fake answers it.
func configDigest(t *testing.T, e *env, node string, typ proxmoxsafe.GuestType, vmid int) string {
	t.Helper()
	res, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Config["digest"]
}

// TestConfigRefusals: every refusal sends nothing mutating; invalid input
// and policy refusals send nothing at all.
func TestConfigRefusals(t *testing.T) {
	t.Parallel()
	only := func(keys ...string) func(*proxmoxsafe.Config) {
		return func(c *proxmoxsafe.Config) { c.Policy.ConfigKeys = keys }
	}
	resize := func(in proxmoxsafe.ResizeDiskInput) func(context.Context, *proxmoxsafe.Client) error {
		return func(ctx context.Context, c *proxmoxsafe.Client) error { _, err := c.ResizeDisk(ctx, in); return err }
	}
	set := func(in proxmoxsafe.SetGuestConfigInput) func(context.Context, *proxmoxsafe.Client) error {
		return func(ctx context.Context, c *proxmoxsafe.Client) error {
			_, err := c.SetGuestConfig(ctx, in)
			return err
		}
	}
	cfg := func(vmid int, kv ...string) proxmoxsafe.SetGuestConfigInput {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		node, typ := "pve2", proxmoxsafe.TypeQEMU
		switch vmid {
		case 100, 102:
			node = "pve1"
		case 200:
			node, typ = "pve1", proxmoxsafe.TypeLXC
		}
		return configIn(node, typ, vmid, m)
	}
	withApproval := func(in proxmoxsafe.SetGuestConfigInput, a string) proxmoxsafe.SetGuestConfigInput {
		in.Approval = a
		return in
	}
	tests := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		call    func(context.Context, *proxmoxsafe.Client) error
		kind    error
		mention string
		noReq   bool
	}{
		// Resize.
		{"shrink to an absolute size", nil, resize(resizeIn("pve2", "qemu", 103, "scsi0", "50G")), proxmoxsafe.ErrPrecondition, "never shrunk", false},
		{"the same size", nil, resize(resizeIn("pve2", "qemu", 103, "scsi0", "100G")), proxmoxsafe.ErrPrecondition, "is 100G", false},
		{"negative size", nil, resize(resizeIn("pve2", "qemu", 103, "scsi0", "-5G")), proxmoxsafe.ErrInvalidInput, "size", true},
		{"unknown unit", nil, resize(resizeIn("pve2", "qemu", 103, "scsi0", "10X")), proxmoxsafe.ErrInvalidInput, "size", true},
		{"grow by zero", nil, resize(resizeIn("pve2", "qemu", 103, "scsi0", "+0G")), proxmoxsafe.ErrInvalidInput, "zero", true},
		{"container key on a VM", nil, resize(resizeIn("pve2", "qemu", 103, "rootfs", "+1G")), proxmoxsafe.ErrInvalidInput, "disk", true},
		{"VM key on a container", nil, resize(resizeIn("pve1", "lxc", 200, "scsi0", "+1G")), proxmoxsafe.ErrInvalidInput, "disk", true},
		{"index beyond Proxmox's", nil, resize(resizeIn("pve2", "qemu", 103, "scsi31", "+1G")), proxmoxsafe.ErrInvalidInput, "disk", true},
		{"disk not there", nil, resize(resizeIn("pve2", "qemu", 103, "scsi5", "+1G")), proxmoxsafe.ErrPrecondition, "has no disk scsi5", false},
		{"resize a locked VM", nil, resize(resizeIn("pve1", "qemu", 102, "scsi0", "+1G")), proxmoxsafe.ErrPrecondition, "locked (backup)", false},
		{"resize a template", nil, resize(resizeIn("pve2", "qemu", 105, "scsi0", "+1G")), proxmoxsafe.ErrPrecondition, "template", false},
		{"resize without approval", nil, resize(proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Disk: "scsi0", Size: "+10G"}),
			proxmoxsafe.ErrApprovalRequired, "APPROVE resize pve2/qemu/103 disk=scsi0 size=+10G", false},
		{"resize approved for another size", nil, resize(proxmoxsafe.ResizeDiskInput{
			GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103},
			Disk:     "scsi0",
			Size:     "+100G",
			Controls: proxmoxsafe.Controls{Approval: "APPROVE resize pve2/qemu/103 disk=scsi0 size=+10G"},
		}), proxmoxsafe.ErrApprovalRequired, "does not match", false},
		{"class not enabled", func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} },
			resize(resizeIn("pve2", "qemu", 103, "scsi0", "+1G")), proxmoxsafe.ErrNotAllowed, `"config" mutation class`, true},
		{"node not allowed", nil, resize(resizeIn("pve3", "qemu", 106, "scsi0", "+1G")), proxmoxsafe.ErrNotAllowed, "pve3", true},
		{"protected guest", func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{103} },
			resize(resizeIn("pve2", "qemu", 103, "scsi0", "+1G")), proxmoxsafe.ErrNotAllowed, "protected", true},
		{"read-only", func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }, resize(resizeIn("pve2", "qemu", 103, "scsi0", "+1G")), proxmoxsafe.ErrNotAllowed, "read-only", true},
		// Set config: input.
		{"never-key args", nil, set(cfg(103, "args", "-no-reboot")), proxmoxsafe.ErrInvalidInput, "never", true},
		{"unknown key", nil, set(cfg(103, "net0", "virtio,bridge=vmbr1")), proxmoxsafe.ErrInvalidInput, "not a config key this server can change", true},
		{"key of the other type", nil, set(cfg(103, "hostname", "x")), proxmoxsafe.ErrInvalidInput, "not a config key of a qemu guest", true},
		{"cores zero", nil, set(cfg(103, "cores", "0")), proxmoxsafe.ErrInvalidInput, "between 1 and", true},
		{"cores not a number", nil, set(cfg(103, "cores", "four")), proxmoxsafe.ErrInvalidInput, "whole number", true},
		{"memory below 16", nil, set(cfg(103, "memory", "8")), proxmoxsafe.ErrInvalidInput, "between 16", true},
		{"container cores above 8192", nil, set(cfg(200, "cores", "8193")), proxmoxsafe.ErrInvalidInput, "between 1 and 8192", true},
		{"bad name", nil, set(cfg(103, "name", "bad name")), proxmoxsafe.ErrInvalidInput, "DNS name", true},
		{"bad tag", nil, set(cfg(103, "tags", "ok;no!")), proxmoxsafe.ErrInvalidInput, "invalid tag", true},
		{"boolean as true", nil, set(cfg(103, "onboot", "true")), proxmoxsafe.ErrInvalidInput, "0 or 1", true},
		{"description with escapes", nil, set(cfg(103, "description", "hi\x1b[31m")), proxmoxsafe.ErrInvalidInput, "plain text", true},
		{"empty value", nil, set(cfg(103, "name", "")), proxmoxsafe.ErrInvalidInput, "empty", true},
		{"nothing at all", nil, set(cfg(103)), proxmoxsafe.ErrInvalidInput, "at least one", true},
		{"set and delete one key", nil, set(configIn("pve2", "qemu", 103, map[string]string{"tags": "a"}, "tags")), proxmoxsafe.ErrInvalidInput, "either set or deleted", true},
		// Set config: policy.
		{"key outside the allowlist", only("description"), set(cfg(103, "cores", "2")), proxmoxsafe.ErrNotAllowed, "allowlist", true},
		{"delete outside the allowlist", only("cores"), set(configIn("pve2", "qemu", 103, nil, "tags")), proxmoxsafe.ErrNotAllowed, "allowlist", true},
		{"config class not enabled", func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} },
			set(cfg(103, "cores", "2")), proxmoxsafe.ErrNotAllowed, `"config" mutation class`, true},
		// Set config: fresh state.
		{"locked VM", nil, set(cfg(102, "cores", "2")), proxmoxsafe.ErrPrecondition, "locked (backup)", false},
		{"template", nil, set(configIn("pve2", "qemu", 105, map[string]string{"cores": "4"})), proxmoxsafe.ErrPrecondition, "template", false},
		{"delete what is not set", nil, set(configIn("pve2", "qemu", 103, nil, "description")), proxmoxsafe.ErrPrecondition, "nothing to delete", false},
		{"nothing changes", nil, set(cfg(103, "cores", "8")), proxmoxsafe.ErrPrecondition, "nothing would change", false},
		{"balloon above memory", nil, set(cfg(103, "balloon", "20000")), proxmoxsafe.ErrPrecondition, "exceed its memory", false},
		{"no approval", nil, set(withApproval(cfg(103, "cores", "2"), "")), proxmoxsafe.ErrApprovalRequired, "APPROVE config pve2/qemu/103 cores=2", false},
		{"approval for another guest", nil, set(withApproval(cfg(103, "cores", "2"), "APPROVE config pve2/qemu/107 cores=2")), proxmoxsafe.ErrApprovalRequired, "does not match", false},
		{"approval for another value", nil, set(withApproval(cfg(103, "cores", "2"), "APPROVE config pve2/qemu/103 cores=4")), proxmoxsafe.ErrApprovalRequired, "does not match", false},
		{"approval of another class", nil, set(withApproval(cfg(103, "cores", "2"), "APPROVE resize pve2/qemu/103 cores=2")), proxmoxsafe.ErrApprovalRequired, "does not match", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newConfigEnv(t, tt.mod)
			err := tt.call(t.Context(), e.client)
			assertRefusedNothingSent(t, e, err, tt.kind, tt.mention, tt.noReq)
		})
	}
}

// TestConfigPlanSendsNothing: plan: true returns the changes, the request
// and the phrase without sending anything mutating; the description shows
// as its digest only.
func TestConfigPlanSendsNothing(t *testing.T) {
	t.Parallel()
	e := newConfigEnv(t, nil)
	in := proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Set: map[string]string{"memory": "4096", "description": "secret plans"}, Controls: proxmoxsafe.Controls{Plan: true}}
	r, err := e.client.SetGuestConfig(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.fake.MutatingRequests()) != 0 || r.Plan == nil || r.UPID != "" {
		t.Fatalf("plan sent %v, receipt %+v", reqLines(e.fake.MutatingRequests()), r)
	}
	p := r.Plan
	if p.Method != "POST" || p.Path != "/nodes/pve1/qemu/100/config" || p.Params["memory"] != "4096" || p.Params["description"] != digestOf("secret plans") || p.Params["digest"] == "" {
		t.Errorf("plan = %+v", p)
	}
	if p.Approval != in.ApprovalPhrase() || !strings.Contains(p.Effect, "memory 8192 → 4096") || strings.Contains(p.Effect, "secret plans") {
		t.Errorf("plan approval %q effect %q", p.Approval, p.Effect)
	}
	if len(r.Changes) != 2 {
		t.Errorf("changes = %+v", r.Changes)
	}
	rr, err := e.client.ResizeDisk(t.Context(), proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Disk: "rootfs", Size: "+2G", Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil || rr.Plan == nil || rr.Plan.Method != "PUT" || !strings.Contains(rr.Plan.Effect, "from 8G to 10G") || len(e.fake.MutatingRequests()) != 0 {
		t.Errorf("resize plan = %+v, %v", rr, err)
	}
}

var concurrentEdits atomic.Int64
