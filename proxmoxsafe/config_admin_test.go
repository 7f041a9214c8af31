package proxmoxsafe_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
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

func resizeIn(node string, typ proxmoxsafe.GuestType, vmid int, disk, size string) proxmoxsafe.ResizeDiskInput {
	in := proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Disk: disk, Size: size}
	in.Approval = in.ApprovalPhrase()
	return in
}

func configIn(node string, typ proxmoxsafe.GuestType, vmid int, set map[string]string, del ...string) proxmoxsafe.SetGuestConfigInput {
	in := proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Set: set, Delete: del}
	in.Approval = in.ApprovalPhrase()
	return in
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

func TestResizeDiskHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in            proxmoxsafe.ResizeDiskInput
		path          string
		before, after string
		observed      string
	}{
		{"grow a VM disk by 10G", resizeIn("pve2", "qemu", 103, "scsi0", "+10G"), "/nodes/pve2/qemu/103/resize", "100G", "110G", "scsi0 is 110G"},
		{"grow a running container to an absolute size", resizeIn("pve1", "lxc", 200, "rootfs", "12G"), "/nodes/pve1/lxc/200/resize", "8G", "12G", "rootfs is 12G"},
		{"grow by a fraction", resizeIn("pve2", "qemu", 103, "scsi0", "+0.5G"), "/nodes/pve2/qemu/103/resize", "100G", "102912M", "scsi0 is 102912M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newConfigEnv(t, nil)
			digest := configDigest(t, e, tt.in.Node, tt.in.Type, tt.in.VMID)
			e.fake.ResetRequests()
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.ResizeDisk(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "PUT" || muts[0].Path != tt.path {
				t.Fatalf("mutating requests = %v, want one PUT %s", reqLines(muts), tt.path)
			}
			if f := muts[0].Form; f.Get("disk") != in.Disk || f.Get("size") != in.Size || f.Get("digest") != digest || len(f) != 3 {
				t.Errorf("form = %v, want disk, size as given and the digest %s", f, digest)
			}
			if r.Task.Type != "resize" {
				t.Errorf("task type = %q, want resize", r.Task.Type)
			}
			want := []proxmoxsafe.ConfigChange{{Key: in.Disk, Current: tt.before, New: tt.after}}
			if !slices.Equal(r.Changes, want) {
				t.Errorf("changes = %+v, want %+v", r.Changes, want)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed, verified %q", o, tt.observed)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			if p := recs[0].Params; !slices.Equal(p, []string{"disk=" + in.Disk, "size=" + in.Size}) || recs[0].Op != proxmoxsafe.OpResizeDisk {
				t.Errorf("audit op %s params %v", recs[0].Op, p)
			}
		})
	}
}

func TestSetGuestConfigHappyPath(t *testing.T) {
	t.Parallel()
	const desc = "Build box\nowned by ci"
	tests := []struct {
		name         string
		in           proxmoxsafe.SetGuestConfigInput
		method, path string
		form         map[string]string // without the digest
		sync         bool
		changes      []proxmoxsafe.ConfigChange
		pending      []string
		observed     string
		phrase       string
	}{
		{name: "stopped VM: everything applies", method: "POST", path: "/nodes/pve2/qemu/103/config",
			in:   configIn("pve2", "qemu", 103, map[string]string{"cores": "6", "memory": "4096", "tags": "ci,build", "description": desc}),
			form: map[string]string{"cores": "6", "memory": "4096", "tags": "build;ci", "description": desc},
			changes: []proxmoxsafe.ConfigChange{
				{Key: "cores", Current: "8", New: "6"}, {Key: "description", New: digestOf(desc)},
				{Key: "memory", Current: "16384", New: "4096"}, {Key: "tags", Current: "ci", New: "build;ci"}},
			observed: "applied: cores=6, description=" + digestOf(desc) + ", memory=4096, tags=build;ci",
			phrase:   "APPROVE config pve2/qemu/103 cores=6 description=" + digestOf(desc) + " memory=4096 tags=build;ci"},
		{name: "running VM: cores wait for the next start, the name applies", method: "POST", path: "/nodes/pve1/qemu/100/config",
			in:       configIn("pve1", "qemu", 100, map[string]string{"cores": "8", "name": "web-01b"}),
			form:     map[string]string{"cores": "8", "name": "web-01b"},
			changes:  []proxmoxsafe.ConfigChange{{Key: "cores", Current: "4", New: "8"}, {Key: "name", Current: "web-01", New: "web-01b"}},
			pending:  []string{"cores"},
			observed: "applied: name=web-01b; pending until the guest's next start (not applied yet): cores=8",
			phrase:   "APPROVE config pve1/qemu/100 cores=8 name=web-01b"},
		{name: "running container: PUT answers null, delete tags", method: "PUT", path: "/nodes/pve1/lxc/200/config", sync: true,
			in:       configIn("pve1", "lxc", 200, map[string]string{"cores": "2", "hostname": "dns-01b"}, "tags"),
			form:     map[string]string{"cores": "2", "hostname": "dns-01b", "delete": "tags"},
			changes:  []proxmoxsafe.ConfigChange{{Key: "cores", Current: "1", New: "2"}, {Key: "hostname", Current: "dns-01", New: "dns-01b"}, {Key: "tags", Current: "dns;infra", Delete: true}},
			observed: "applied: cores=2, hostname=dns-01b, deleted tags",
			phrase:   "APPROVE config pve1/lxc/200 cores=2 hostname=dns-01b delete=tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newConfigEnv(t, nil)
			if got := tt.in.ApprovalPhrase(); got != tt.phrase {
				t.Errorf("phrase = %q, want %q", got, tt.phrase)
			}
			digest := configDigest(t, e, tt.in.Node, tt.in.Type, tt.in.VMID)
			e.fake.ResetRequests()
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.SetGuestConfig(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != tt.method || muts[0].Path != tt.path {
				t.Fatalf("mutating requests = %v, want one %s %s", reqLines(muts), tt.method, tt.path)
			}
			f := muts[0].Form
			if f.Get("digest") != digest || len(f) != len(tt.form)+1 {
				t.Errorf("form = %v, want %v and digest %s", f, tt.form, digest)
			}
			for k, v := range tt.form {
				if f.Get(k) != v {
					t.Errorf("form %s = %q, want %q", k, f.Get(k), v)
				}
			}
			if tt.sync != r.Synchronous || (tt.sync && r.UPID != "") || (!tt.sync && r.Task.Type != "qmconfig") {
				t.Errorf("receipt: synchronous %v, upid %q, task %q", r.Synchronous, r.UPID, r.Task.Type)
			}
			if !slices.Equal(r.Changes, tt.changes) {
				t.Errorf("changes = %+v\nwant %+v", r.Changes, tt.changes)
			}
			o := r.Outcome
			if o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed || !slices.Equal(o.Pending, tt.pending) {
				t.Errorf("outcome = %+v, want completed, observed %q, pending %v", o, tt.observed, tt.pending)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			if strings.Contains(e.audit.String(), "owned by ci") {
				t.Error("the audit log quotes the description; it must bind it by digest")
			}
			if want := strings.Fields(tt.phrase)[3:]; !slices.Equal(recs[0].Params, want) {
				t.Errorf("audit params = %v, want %v", recs[0].Params, want)
			}
		})
	}
}

func digestOf(s string) string {
	return proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Type: "qemu"}, Set: map[string]string{"description": s}}.ApprovalPhrase()[len("APPROVE config /qemu/0 description="):]
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

// TestNeverConfigKeys: case variants and indexes of the never-keys are
// refused by New (in the allowlist) and by SetGuestConfig (before any
// request).
func TestNeverConfigKeys(t *testing.T) {
	t.Parallel()
	never := []string{"args", "ARGS", "Args", "hookscript", "HookScript", "cicustom", "cipassword", "sshkeys", "smbios1",
		"hostpci", "hostpci0", "HOSTPCI15", "usb3", "serial0", "parallel2", "mp0", "MP255", "dev0", "virtiofs1", "unused0",
		"lxc", "lxc.apparmor.profile", "LXC.cgroup2.devices.allow", "lxc.mount.entry", "env", "entrypoint",
		"lock", "protection", "template", "features", "unprivileged", " args"}
	for _, k := range never {
		if _, ok := proxmoxsafe.NeverConfigKey(k); !ok {
			t.Errorf("NeverConfigKey(%q) = false", k)
		}
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "user@pve!tok", TokenSecret: "s",
			Policy: proxmoxsafe.Policy{ConfigKeys: []string{k}}})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "can never be allowed") {
			t.Errorf("New with ConfigKeys [%q]: %v, want a ConfigError saying it can never be allowed", k, err)
		}
	}
	for _, k := range []string{"cores", "memory", "description", "mpx", "hostname"} {
		if r, ok := proxmoxsafe.NeverConfigKey(k); ok {
			t.Errorf("NeverConfigKey(%q) = %q, want not a never-key", k, r)
		}
	}
	e := newConfigEnv(t, nil)
	for _, k := range never {
		for _, typ := range []proxmoxsafe.GuestType{"qemu", "lxc"} {
			_, err := e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: 100}, Set: map[string]string{k: "x"}})
			if !errors.Is(err, proxmoxsafe.ErrInvalidInput) || !strings.Contains(err.Error(), "never") {
				t.Errorf("set %q on %s: %v, want invalid input naming it a never-key", k, typ, err)
			}
			_, err = e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: 100}, Delete: []string{k}})
			if !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
				t.Errorf("delete %q on %s: %v, want invalid input", k, typ, err)
			}
		}
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d upstream requests after never-key refusals, want none", n)
	}
}

func TestConfigKeysPolicy(t *testing.T) {
	t.Parallel()
	_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "user@pve!tok", TokenSecret: "s",
		Policy: proxmoxsafe.Policy{ConfigKeys: []string{"net0"}}})
	if err == nil || !strings.Contains(err.Error(), "not a key this version can set") {
		t.Errorf("New with an unknown key: %v", err)
	}
	e := newConfigEnv(t, nil)
	if got := e.client.Policy().ConfigKeys; !slices.Equal(got, proxmoxsafe.DefaultConfigKeys()) {
		t.Errorf("default ConfigKeys = %v, want %v", got, proxmoxsafe.DefaultConfigKeys())
	}
	e = newConfigEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ConfigKeys = []string{"cpulimit", "cores"} })
	if got := e.client.Policy().ConfigKeys; !slices.Equal(got, []string{"cores", "cpulimit"}) {
		t.Errorf("ConfigKeys = %v", got)
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

// concurrentSink changes guest 103's config in the fake when the
// "approved" record is written: right between the precondition's read and
// the request, as another user would.
type concurrentSink struct {
	next proxmoxsafe.AuditSink
	fake *proxmoxtest.Server
}

var concurrentEdits atomic.Int64

func (s concurrentSink) Record(ctx context.Context, rec proxmoxsafe.AuditRecord) error {
	if rec.Event == proxmoxsafe.AuditApproved {
		s.fake.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.Description = "changed by someone else " + strconv.FormatInt(concurrentEdits.Add(1), 10)
				}
			}
		})
	}
	return s.next.Record(ctx, rec)
}

// TestConfigDigestRefusesConcurrentChange: the digest sent with the
// request makes Proxmox refuse instead of overwriting a change made after
// the config was read; nothing changes.
func TestConfigDigestRefusesConcurrentChange(t *testing.T) {
	t.Parallel()
	e := newConfigEnvWithSink(t)
	_, err := e.client.SetGuestConfig(t.Context(), configIn("pve2", "qemu", 103, map[string]string{"cores": "2"}))
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "checksum mismatch") {
		t.Fatalf("err = %v, want Proxmox's checksum mismatch", err)
	}
	if g, _ := e.fake.Guest(103); g.CPUs != 8 {
		t.Errorf("cores = %d, want unchanged 8", g.CPUs)
	}
	_, err = e.client.ResizeDisk(t.Context(), proxmoxsafe.ResizeDiskInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103},
		Disk:     "scsi0",
		Size:     "+1G",
		Controls: proxmoxsafe.Controls{Approval: "APPROVE resize pve2/qemu/103 disk=scsi0 size=+1G", Wait: fastVerify()},
	})
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("resize err = %v, want the task to fail with Proxmox's checksum mismatch", err)
	}
}

func newConfigEnvWithSink(t *testing.T) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(canaryDemo())
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassConfig}}
		c.Audit = concurrentSink{next: c.Audit, fake: fake}
	})
}

// TestConfigChangeDuringApprovalRefused: an approver that takes time
// while someone changes the config: the fresh read after the approval
// sees another digest and refuses before sending.
func TestConfigChangeDuringApprovalRefused(t *testing.T) {
	t.Parallel()
	var fake *proxmoxtest.Server
	slow := approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error {
		fake.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.Tags = append(g.Tags, "touched")
				}
			}
		})
		return nil
	})
	fake = proxmoxtest.NewUnstartedServer(canaryDemo())
	fake.StartTLS()
	e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassConfig}}
		c.Approvers = []proxmoxsafe.Approver{slow}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassConfig: {"test"}}
	})
	_, err := e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Set: map[string]string{"cores": "2"}})
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "changed while the approval was pending") {
		t.Fatalf("err = %v", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests = %v", reqLines(m))
	}
}

// TestConfigPendingUntilRestart: a running VM's cores change is reported
// pending; after a restart the same read shows it applied.
func TestConfigPendingUntilRestart(t *testing.T) {
	t.Parallel()
	e := newConfigEnv(t, nil)
	in := configIn("pve1", "qemu", 100, map[string]string{"cores": "6"})
	in.Wait = fastVerify()
	r, err := e.client.SetGuestConfig(t.Context(), in)
	if err != nil || !slices.Equal(r.Outcome.Pending, []string{"cores"}) {
		t.Fatalf("receipt %+v, err %v; want cores pending", r, err)
	}
	if g, _ := e.fake.Guest(100); g.CPUs != 4 {
		t.Errorf("cores applied to the running VM: %d", g.CPUs)
	}
	fakeRestart(t, e, "pve1", "qemu", 100)
	out, err := e.client.Verify(t.Context(), r, fastVerify())
	if err != nil || out.Pending != nil || out.Observed != "applied: cores=6" {
		t.Errorf("after restart: %+v, %v", out, err)
	}
}

// fakeRestart stops and starts a guest through the fake's API (the
// default token), which applies its pending config as Proxmox's start
// does.
func fakeRestart(t *testing.T, e *env, node, typ string, vmid int) {
	t.Helper()
	for _, action := range []string{"stop", "start"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
			e.fake.URL+"/api2/json/nodes/"+node+"/"+typ+"/"+strconv.Itoa(vmid)+"/status/"+action, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "PVEAPIToken=automation@pve!mcp="+canary)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := e.fake.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", action, resp.Status)
		}
		e.fake.FinishTasks()
	}
}
