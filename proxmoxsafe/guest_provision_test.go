package proxmoxsafe_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	testISO      = "local:iso/debian-13.iso"
	testTemplate = "local:vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"
	testSSHKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7yT0b5X4JmEqwG0w3uHcYlOqz2w0u1n1y5Kq3bQZpA ops@example"
)

// provisionCluster: pve1, pve2 online and pve3 offline; templates 9000
// (local-lvm) and 9001 (shared ceph) and container template 9100; storages
// local (iso, vztmpl, backup), local-lvm (images, rootdir), ceph (shared),
// a disabled one, an inactive one.
func provisionCluster() *proxmoxtest.Cluster {
	cl := testCluster()
	cl.Guests = append(cl.Guests,
		&proxmoxtest.Guest{VMID: 9000, Node: "pve1", Type: "qemu", Name: "tmpl-debian", Status: "stopped", Template: true, CPUs: 2, MaxMem: 2 << 30, MaxDisk: 10 << 30},
		&proxmoxtest.Guest{VMID: 9001, Node: "pve1", Type: "qemu", Name: "tmpl-ceph", Status: "stopped", Template: true, CPUs: 2, MaxMem: 2 << 30, MaxDisk: 10 << 30,
			Config: map[string]string{"scsi0": "ceph:base-9001-disk-0,size=10G"}},
		&proxmoxtest.Guest{VMID: 9100, Node: "pve1", Type: "lxc", Name: "ct-tmpl", Status: "stopped", Template: true, CPUs: 1, MaxMem: 512 << 20, MaxDisk: 8 << 30},
		&proxmoxtest.Guest{VMID: 202, Node: "pve1", Type: "lxc", Name: "ct3", Status: "stopped", CPUs: 1, MaxMem: 512 << 20, MaxDisk: 8 << 30},
	)
	cl.Storages = []*proxmoxtest.Storage{
		{ID: "local", Type: "dir", Content: []string{"backup", "iso", "vztmpl"}, Total: 100 << 30,
			Volumes: []string{"iso/debian-13.iso", "vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"}},
		{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Total: 800 << 30},
		{ID: "ceph", Type: "rbd", Content: []string{"images", "rootdir"}, Shared: true, Total: 8 << 40},
		{ID: "off", Type: "dir", Content: []string{"images", "rootdir"}, Disabled: true},
		{ID: "nfs-down", Type: "nfs", Content: []string{"images"}, Shared: true, Inactive: true},
	}
	return cl
}

// newProvisionEnv: provision enabled on pve1..pve3, VMID 555 and pool
// "prod" protected.
func newProvisionEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(provisionCluster())
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:    []string{"pve1", "pve2", "pve3"},
			Classes:         []proxmoxsafe.Class{proxmoxsafe.ClassProvision},
			ProtectedGuests: []int{555},
			ProtectedPools:  []string{"prod"},
		}
		if mod != nil {
			mod(c)
		}
	})
}

func approvedClone(in proxmoxsafe.CloneGuestInput) proxmoxsafe.CloneGuestInput {
	in.Approval = in.ApprovalPhrase(in.NewID)
	return in
}

func vmIn() proxmoxsafe.CreateVMInput {
	in := proxmoxsafe.CreateVMInput{Node: "pve1", VMID: 130, Name: "web9", Cores: 2, MemoryMiB: 2048, DiskStorage: "local-lvm", DiskSizeGiB: 32, Bridge: "vmbr0", ISO: testISO}
	in.Approval = in.ApprovalPhrase(0)
	return in
}

func ctIn() proxmoxsafe.CreateContainerInput {
	in := proxmoxsafe.CreateContainerInput{Node: "pve1", VMID: 140, OSTemplate: testTemplate, Hostname: "dns2", Cores: 1, MemoryMiB: 512, SwapMiB: 256,
		RootfsStorage: "local-lvm", RootfsSizeGiB: 8, Bridge: "vmbr0", IP: "192.0.2.10/24", Gateway: "192.0.2.1", SSHPublicKeys: testSSHKey}
	in.Approval = in.ApprovalPhrase(0)
	return in
}

func TestProvisionHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		call       func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error)
		path, form string
		taskType   string
		newGuest   string // node/type/vmid
		observed   string
	}{
		{name: "full clone of a template", path: "/nodes/pve1/qemu/9000/clone", taskType: "qmclone", newGuest: "pve1/qemu/123",
			form:     "description=from+the+template&full=1&name=web2&newid=123&pool=dev",
			observed: "pve1/qemu/123 exists, unlocked, configuration as requested (description, name)",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, Name: "web2", Pool: "dev", Description: "from the template"})
				in.Wait = fastVerify()
				return c.CloneGuest(ctx, in)
			}},
		{name: "linked clone to another node from shared storage", path: "/nodes/pve1/qemu/9001/clone", taskType: "qmclone", newGuest: "pve2/qemu/124",
			form: "full=0&newid=124&target=pve2", observed: "pve2/qemu/124 exists, unlocked",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9001}, NewID: 124, Linked: true, TargetNode: "pve2"})
				in.Wait = fastVerify()
				return c.CloneGuest(ctx, in)
			}},
		{name: "full clone of a stopped container to shared storage on another node", path: "/nodes/pve1/lxc/202/clone", taskType: "vzclone", newGuest: "pve2/lxc/125",
			form: "full=1&hostname=ct4&newid=125&storage=ceph&target=pve2", observed: "pve2/lxc/125 exists, unlocked, configuration as requested (hostname)",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := approvedClone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 202}, NewID: 125, TargetNode: "pve2", Storage: "ceph", Name: "ct4"})
				in.Wait = fastVerify()
				return c.CloneGuest(ctx, in)
			}},
		{name: "create a VM", path: "/nodes/pve1/qemu", taskType: "qmcreate", newGuest: "pve1/qemu/130",
			form:     "cores=2&ide2=local%3Aiso%2Fdebian-13.iso%2Cmedia%3Dcdrom&memory=2048&name=web9&net0=virtio%2Cbridge%3Dvmbr0&ostype=l26&scsi0=local-lvm%3A32&scsihw=virtio-scsi-single&sockets=1&vmid=130",
			observed: "pve1/qemu/130 exists, unlocked, configuration as requested (cores, ide2, memory, name, net0, ostype, scsi0, scsihw, sockets)",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := vmIn()
				in.Wait = fastVerify()
				return c.CreateVM(ctx, in)
			}},
		{name: "create a container", path: "/nodes/pve1/lxc", taskType: "vzcreate", newGuest: "pve1/lxc/140",
			form: "cores=1&hostname=dns2&memory=512&net0=name%3Deth0%2Cbridge%3Dvmbr0%2Cip%3D192.0.2.10%2F24%2Cgw%3D192.0.2.1&ostemplate=local%3Avztmpl%2Fdebian-13-standard_13.1-1_amd64.tar.zst&rootfs=local-lvm%3A8" +
				"&ssh-public-keys=" + url.QueryEscape(testSSHKey) + "&swap=256&unprivileged=1&vmid=140",
			observed: "pve1/lxc/140 exists, unlocked, configuration as requested (cores, hostname, memory, net0, rootfs, swap, unprivileged)",
			call: func(ctx context.Context, c *proxmoxsafe.Client) (*proxmoxsafe.Receipt, error) {
				in := ctIn()
				in.Wait = fastVerify()
				return c.CreateContainer(ctx, in)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newProvisionEnv(t, nil)
			r, err := tt.call(t.Context(), e.client)
			if err != nil {
				t.Fatalf("err = %v (outcome %+v)", err, r)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "POST" || muts[0].Path != tt.path || muts[0].Form.Encode() != tt.form {
				t.Fatalf("mutating requests = %+v, want one POST %s with\n%s", muts, tt.path, tt.form)
			}
			if r.Task.Type != tt.taskType {
				t.Errorf("task type = %q, want %q", r.Task.Type, tt.taskType)
			}
			if r.NewGuest == nil || r.NewGuest.String() != tt.newGuest {
				t.Fatalf("new guest = %+v, want %s", r.NewGuest, tt.newGuest)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed and verified %q", o, tt.observed)
			}
			g, ok := e.fake.Guest(r.NewGuest.VMID)
			if !ok || g.Lock != "" || g.Node != r.NewGuest.Node || g.Type != string(r.NewGuest.Type) {
				t.Errorf("new guest in the fake = %+v, %v", g, ok)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			if len(recs) == 3 && (len(recs[1].Params) == 0 || !slices.Equal(recs[0].Params, recs[1].Params)) {
				t.Errorf("audit params = %v / %v, want the phrase's parameters in both", recs[0].Params, recs[1].Params)
			}
		})
	}
}

// TestProvisionPhraseAndAudit: the phrases name every parameter, free
// text by digest; the audit records carry them.
func TestProvisionPhraseAndAudit(t *testing.T) {
	t.Parallel()
	clone := proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, TargetNode: "pve2", Storage: "ceph", Name: "web2", Pool: "dev", Description: "x"}
	if got, want := clone.ApprovalPhrase(0), "APPROVE clone pve1/qemu/9000 newid=123 full=1 target=pve2 storage=ceph name=web2 pool=dev description="+proxmoxsafe.TextDigest("x"); got != want {
		t.Errorf("clone phrase = %q, want %q", got, want)
	}
	vm := vmIn()
	if got, want := vm.ApprovalPhrase(0), "APPROVE create pve1/qemu/130 name=web9 cores=2 sockets=1 memory=2048 ostype=l26 scsihw=virtio-scsi-single scsi0=local-lvm:32 net0=virtio,bridge=vmbr0 ide2=local:iso/debian-13.iso,media=cdrom"; got != want {
		t.Errorf("VM phrase = %q, want %q", got, want)
	}
	ct := ctIn()
	if got := ct.ApprovalPhrase(0); !strings.Contains(got, "ssh-public-keys="+proxmoxsafe.TextDigest(testSSHKey)) || strings.Contains(got, "AAAA") || !strings.Contains(got, " unprivileged=1") {
		t.Errorf("container phrase = %q, want the keys by digest and unprivileged=1", got)
	}

	for _, a := range []string{"clone", "create"} {
		if r := proxmoxsafe.ActionRisk(a); !strings.Contains(r, "storage") {
			t.Errorf("ActionRisk(%s) = %q, want the storage a new guest takes", a, r)
		}
	}

	e := newProvisionEnv(t, nil)
	in := ctIn()
	if _, err := e.client.CreateContainer(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	recs := auditEvents(t, e)
	if len(recs) != 2 || recs[1].Event != "submitted" || recs[1].Op != proxmoxsafe.OpCreateContainer || recs[1].VMID != 140 || recs[1].UPID == "" {
		t.Fatalf("audit = %+v", recs)
	}
	if got := "APPROVE create pve1/lxc/140 " + strings.Join(recs[1].Params, " "); got != in.Approval {
		t.Errorf("audit params = %q, want the phrase's %q", got, in.Approval)
	}
}

func TestProvisionRefusals(t *testing.T) {
	t.Parallel()
	clone := func(in proxmoxsafe.CloneGuestInput) func(context.Context, *proxmoxsafe.Client) error {
		return func(ctx context.Context, c *proxmoxsafe.Client) error {
			_, err := c.CloneGuest(ctx, approvedClone(in))
			return err
		}
	}
	vm := func(mod func(*proxmoxsafe.CreateVMInput)) func(context.Context, *proxmoxsafe.Client) error {
		return func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := vmIn()
			mod(&in)
			in.Approval = in.ApprovalPhrase(0)
			_, err := c.CreateVM(ctx, in)
			return err
		}
	}
	ct := func(mod func(*proxmoxsafe.CreateContainerInput)) func(context.Context, *proxmoxsafe.Client) error {
		return func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := ctIn()
			mod(&in)
			in.Approval = in.ApprovalPhrase(0)
			_, err := c.CreateContainer(ctx, in)
			return err
		}
	}
	q := func(vmid, newid int) proxmoxsafe.CloneGuestInput {
		return proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: vmid}, NewID: newid}
	}
	tests := []struct {
		name    string
		call    func(context.Context, *proxmoxsafe.Client) error
		kind    error
		mention string
		noReq   bool // refused before any request
		mod     func(*proxmoxsafe.Config)
	}{
		// Input (zero requests).
		{name: "linked clone with a storage", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, Linked: true, Storage: "ceph"}),
			kind: proxmoxsafe.ErrInvalidInput, mention: "not allowed for a linked clone", noReq: true},
		{name: "name that is no DNS name", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, Name: "web_2"}),
			kind: proxmoxsafe.ErrInvalidInput, mention: "DNS name", noReq: true},
		{name: "a password in the SSH keys", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.SSHPublicKeys = "hunter2hunter2" }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "passwords are never accepted", noReq: true},
		{name: "a private key in the SSH keys", call: ct(func(in *proxmoxsafe.CreateContainerInput) {
			in.SSHPublicKeys = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----"
		}), kind: proxmoxsafe.ErrInvalidInput, mention: "ssh_public_keys", noReq: true},
		{name: "gateway with dhcp", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.IP = "dhcp" }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "gateway", noReq: true},
		{name: "an IP without prefix", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.IP = "192.0.2.10"; in.Gateway = "" }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "ip", noReq: true},
		{name: "an ISO that is no ISO volume", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.ISO = "local:vztmpl/x.tar.zst" }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "iso", noReq: true},
		{name: "a bridge with a space", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.Bridge = "vmbr0 x" }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "bridge", noReq: true},
		{name: "memory below Proxmox's minimum", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.MemoryMiB = 8 }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "memory", noReq: true},
		// Policy (zero requests).
		{name: "class not enabled", call: clone(q(9000, 123)), kind: proxmoxsafe.ErrNotAllowed, mention: `"provision" mutation class`, noReq: true,
			mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} }},
		{name: "read-only", call: vm(func(*proxmoxsafe.CreateVMInput) {}), kind: proxmoxsafe.ErrNotAllowed, mention: "read-only", noReq: true,
			mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }},
		{name: "node not allowed", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.Node = "pve9" }), kind: proxmoxsafe.ErrNotAllowed, mention: "pve9", noReq: true},
		{name: "target node not allowed", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9001}, NewID: 123, TargetNode: "pve7"}),
			kind: proxmoxsafe.ErrNotAllowed, mention: "pve7", noReq: true},
		{name: "protected new VMID", call: clone(q(9000, 555)), kind: proxmoxsafe.ErrNotAllowed, mention: "guest 555 is protected", noReq: true},
		{name: "protected source", call: clone(q(106, 123)), kind: proxmoxsafe.ErrNotAllowed, mention: "guest 106 is protected", noReq: true,
			mod: func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{106} }},
		{name: "protected pool", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.Pool = "prod" }), kind: proxmoxsafe.ErrNotAllowed, mention: `pool "prod"`},
		// Preconditions from fresh state.
		{name: "new VMID in use", call: clone(q(9000, 100)), kind: proxmoxsafe.ErrPrecondition, mention: "VMID 100 is already in use (qemu 100 on pve1)"},
		{name: "VMID of a create in use", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.VMID = 201 }), kind: proxmoxsafe.ErrPrecondition, mention: "VMID 201 is already in use"},
		{name: "source locked", call: clone(q(104, 123)), kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "linked clone of a VM that is no template", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, NewID: 123, Linked: true}),
			kind: proxmoxsafe.ErrPrecondition, mention: "not a template"},
		{name: "full clone of a running container", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, NewID: 123}),
			kind: proxmoxsafe.ErrPrecondition, mention: "running"},
		{name: "target node offline", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9001}, NewID: 123, TargetNode: "pve3"}),
			kind: proxmoxsafe.ErrPrecondition, mention: "node pve3 is not online"},
		{name: "another node from local storage", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, TargetNode: "pve2"}),
			kind: proxmoxsafe.ErrPrecondition, mention: "storage local-lvm, which is not shared"},
		{name: "another node to local storage", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9001}, NewID: 123, TargetNode: "pve2", Storage: "local-lvm"}),
			kind: proxmoxsafe.ErrPrecondition, mention: "storage local-lvm is not shared"},
		{name: "clone storage without images", call: clone(proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, Storage: "local"}),
			kind: proxmoxsafe.ErrPrecondition, mention: `storage local does not hold content "images"`},
		{name: "storage disabled", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.DiskStorage = "off" }), kind: proxmoxsafe.ErrPrecondition, mention: "storage off is disabled"},
		{name: "storage inactive", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.DiskStorage = "nfs-down" }), kind: proxmoxsafe.ErrPrecondition, mention: "storage nfs-down is not active"},
		{name: "storage missing", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.DiskStorage = "nope" }), kind: proxmoxsafe.ErrPrecondition, mention: "storage nope does not exist on node pve1"},
		{name: "container storage without rootdir", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.RootfsStorage = "local" }),
			kind: proxmoxsafe.ErrPrecondition, mention: `does not hold content "rootdir"`},
		{name: "ISO missing", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.ISO = "local:iso/nope.iso" }), kind: proxmoxsafe.ErrPrecondition, mention: "volume local:iso/nope.iso does not exist"},
		{name: "template missing", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.OSTemplate = "local:vztmpl/nope.tar.zst" }),
			kind: proxmoxsafe.ErrPrecondition, mention: "volume local:vztmpl/nope.tar.zst does not exist"},
		{name: "template storage without vztmpl", call: ct(func(in *proxmoxsafe.CreateContainerInput) { in.OSTemplate = "ceph:vztmpl/x.tar.zst" }),
			kind: proxmoxsafe.ErrPrecondition, mention: `storage ceph does not hold content "vztmpl"`},
		{name: "create on an offline node", call: vm(func(in *proxmoxsafe.CreateVMInput) { in.Node = "pve3" }), kind: proxmoxsafe.ErrPrecondition, mention: "node pve3 is not online"},
		{name: "source does not exist", call: clone(q(999, 123)), kind: proxmoxsafe.ErrNotFound, mention: "999.conf' does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newProvisionEnv(t, tt.mod)
			err := tt.call(t.Context(), e.client)
			assertRefusedNothingSent(t, e, err, tt.kind, tt.mention, tt.noReq)
		})
	}
}

// TestProvisionApprovalBinding: a phrase for another VMID, another
// parameter set or another operation is refused, nothing is sent.
func TestProvisionApprovalBinding(t *testing.T) {
	t.Parallel()
	base := proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123, Storage: "ceph"}
	vm := vmIn()
	tests := []struct {
		name string
		call func(context.Context, *proxmoxsafe.Client) error
	}{
		{name: "another new VMID", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := base
			in.Approval = strings.Replace(in.ApprovalPhrase(0), "newid=123", "newid=124", 1)
			_, err := c.CloneGuest(ctx, in)
			return err
		}},
		{name: "without the storage", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := base
			in.Approval = "APPROVE clone pve1/qemu/9000 newid=123 full=1"
			_, err := c.CloneGuest(ctx, in)
			return err
		}},
		{name: "a linked clone's phrase for a full one", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := proxmoxsafe.CloneGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 9000}, NewID: 123}
			in.Approval = "APPROVE clone pve1/qemu/9000 newid=123 full=0"
			_, err := c.CloneGuest(ctx, in)
			return err
		}},
		{name: "another description", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := vm
			in.Description = "changed"
			_, err := c.CreateVM(ctx, in) // approval of the input without description
			return err
		}},
		{name: "a clone's phrase for a create", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := vm
			in.Approval = "APPROVE clone pve1/qemu/130"
			_, err := c.CreateVM(ctx, in)
			return err
		}},
		{name: "more memory than approved", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := vm
			in.MemoryMiB = 4096
			_, err := c.CreateVM(ctx, in)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newProvisionEnv(t, nil)
			err := tt.call(t.Context(), e.client)
			var ae *proxmoxsafe.ApprovalError
			if !errors.Is(err, proxmoxsafe.ErrApprovalRequired) || !errors.As(err, &ae) || !ae.Given {
				t.Fatalf("err = %v, want an approval refusal", err)
			}
			if n := len(e.fake.MutatingRequests()); n != 0 {
				t.Errorf("%d mutating requests", n)
			}
		})
	}
}
