package proxmoxsafe_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestGuestStatus(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Guests[0].AgentEnabled = true
	c.Guests[0].Uptime = 7200
	c.Guests[0].Mem = 1 << 30
	c.Guests[0].CPU = 0.25
	e := newEnvWith(t, c, nil)
	tests := []struct {
		name  string
		in    proxmoxsafe.GuestStatusInput
		check func(t *testing.T, r *proxmoxsafe.GuestStatusResult)
	}{
		{"running qemu with agent", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if r.Status != "running" || r.QMPStatus != "running" || r.Paused || !r.AgentEnabled || r.Name != "web1" ||
				r.Uptime != 7200 || r.CPU != 0.25 || r.CPUs != 2 || r.Mem != 1<<30 || r.MaxMem != 2<<30 ||
				r.NetIn == 0 || r.DiskWrite == 0 || !slices.Equal(r.Tags, []string{"prod", "web"}) || r.RunningQEMU == "" {
				t.Errorf("status = %+v", r)
			}
		}},
		{"paused", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 102}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if r.Status != "running" || r.QMPStatus != "paused" || !r.Paused {
				t.Errorf("paused VM = %+v", r)
			}
		}},
		{"template", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 103}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if !r.Template || r.Status != "stopped" || r.Uptime != 0 || r.NetIn != 0 {
				t.Errorf("template = %+v", r)
			}
		}},
		{"locked", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 104}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if r.Lock != "backup" {
				t.Errorf("lock = %q", r.Lock)
			}
		}},
		{"HA-managed", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: proxmoxsafe.TypeQEMU, VMID: 105}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if !r.HAManaged || r.HAState != "started" || r.AgentEnabled {
				t.Errorf("HA = %+v", r)
			}
		}},
		{"container", proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}}, func(t *testing.T, r *proxmoxsafe.GuestStatusResult) {
			if r.Type != proxmoxsafe.TypeLXC || r.QMPStatus != "" || r.Paused || r.AgentEnabled || r.Status != "running" || r.Name != "ct1" {
				t.Errorf("container = %+v", r)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.client.GuestStatus(t.Context(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Node != tc.in.Node || r.Type != tc.in.Type || r.VMID != tc.in.VMID || r.Tags == nil {
				t.Errorf("identity = %s/%s/%d, tags %v", r.Node, r.Type, r.VMID, r.Tags)
			}
			tc.check(t, r)
		})
	}
	want := []string{
		"GET /nodes/pve1/qemu/100/status/current", "GET /nodes/pve1/qemu/102/status/current",
		"GET /nodes/pve1/qemu/103/status/current", "GET /nodes/pve1/qemu/104/status/current",
		"GET /nodes/pve2/qemu/105/status/current", "GET /nodes/pve1/lxc/200/status/current",
	}
	if got := reqLines(e.requests()); !slices.Equal(got, want) {
		t.Errorf("requests = %v", got)
	}
	for _, r := range e.requests() {
		if len(r.Query) != 0 {
			t.Errorf("%s sent query %v", reqLine(r), r.Query)
		}
	}
}

func TestGuestStatusSanitizes(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Guests[0].Name = "web\u200b1\u202e\x1b[31m"
	c.Guests[0].Tags = []string{"pr\u200bod", "\x1b[2J"}
	e := newEnvWith(t, c, nil)
	r, err := e.client.GuestStatus(t.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "web1" || !slices.Equal(r.Tags, []string{"prod"}) {
		t.Errorf("name %q, tags %q", r.Name, r.Tags)
	}
}

func TestGuestStatusNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// Right VMID, wrong type: Proxmox has no 404, only a missing config file.
	_, err := e.client.GuestStatus(t.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 100}})
	if !errors.Is(err, proxmoxsafe.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// guestInputs are the three guest-targeted read inputs, for the refusal
// tests every one of them must pass.
type guestRead struct {
	name string
	call func(e *env, t *testing.T, node string, typ proxmoxsafe.GuestType, vmid int) error
}

var guestReads = []guestRead{
	{"GuestStatus", func(e *env, t *testing.T, node string, typ proxmoxsafe.GuestType, vmid int) error {
		_, err := e.client.GuestStatus(t.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}})
		return err
	}},
	{"GuestConfig", func(e *env, t *testing.T, node string, typ proxmoxsafe.GuestType, vmid int) error {
		_, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}})
		return err
	}},
	{"ListSnapshots", func(e *env, t *testing.T, node string, typ proxmoxsafe.GuestType, vmid int) error {
		_, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}})
		return err
	}},
}

// TestGuestReadsRefuseWithoutRequests: invalid input and nodes off the
// allowlist are refused before any request, by every guest read.
func TestGuestReadsRefuseWithoutRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		node string
		typ  proxmoxsafe.GuestType
		vmid int
		want error
	}{
		{"node not allowlisted", "pve3", proxmoxsafe.TypeQEMU, 300, proxmoxsafe.ErrNotAllowed},
		{"unknown node", "pve9", proxmoxsafe.TypeQEMU, 100, proxmoxsafe.ErrNotAllowed},
		{"bad node", "../pve1", proxmoxsafe.TypeQEMU, 100, proxmoxsafe.ErrInvalidInput},
		{"empty node", "", proxmoxsafe.TypeQEMU, 100, proxmoxsafe.ErrInvalidInput},
		{"bad type", "pve1", "openvz", 100, proxmoxsafe.ErrInvalidInput},
		{"vmid too small", "pve1", proxmoxsafe.TypeQEMU, 99, proxmoxsafe.ErrInvalidInput},
		{"vmid too big", "pve1", proxmoxsafe.TypeQEMU, 1000000000, proxmoxsafe.ErrInvalidInput},
	}
	for _, op := range guestReads {
		for _, tc := range tests {
			t.Run(op.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, nil)
				err := op.call(e, t, tc.node, tc.typ, tc.vmid)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if tc.want == proxmoxsafe.ErrInvalidInput {
					var ve *proxmoxsafe.ValidationError
					if !errors.As(err, &ve) {
						t.Errorf("err is %T, want *ValidationError", err)
					}
				}
				if reqs := e.requests(); len(reqs) != 0 {
					t.Errorf("refused %s sent %v", op.name, reqLines(reqs))
				}
			})
		}
	}
}
