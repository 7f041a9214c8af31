package proxmoxsafe_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// healthCluster is testCluster with pve1's health as a node that needs
// attention shows it, and replication jobs on both nodes.
func healthCluster() *proxmoxtest.Cluster {
	c := testCluster()
	var updates []proxmoxtest.PackageUpdate
	for i := range 60 {
		updates = append(updates, proxmoxtest.PackageUpdate{Package: fmt.Sprintf("lib%02d", 59-i), OldVersion: "1.0", Version: "1.1", Origin: "Debian"})
	}
	updates = append(updates, proxmoxtest.PackageUpdate{Package: "proxmox-kernel-6.17.4-1-pve-signed", Version: "6.17.4-1", Origin: "Proxmox"})
	services := proxmoxtest.DefaultNodeHealth().Services
	services[4] = proxmoxtest.NodeService{Name: "postfix", Desc: "Postfix", ActiveState: "failed", State: "failed", UnitState: "enabled"}
	c.Nodes[0].Health = &proxmoxtest.NodeHealth{
		Updates:  updates,
		Services: services,
		Disks: []proxmoxtest.NodeDisk{
			{DevPath: "/dev/sdb", Model: "ST4000NM000A\x1b[31m", Type: "hdd", Size: 4 << 40, Health: "FAILED!", Wearout: "N/A", RPM: 7200},
			{DevPath: "/dev/nvme0n1", Model: "Samsung SSD 980 PRO 1TB", Type: "nvme", Size: 1 << 40, Health: "PASSED", Wearout: "7", Used: "ZFS"},
			{DevPath: "/dev/sda", Model: "QEMU HARDDISK", Type: "hdd", Size: 32 << 30, Health: "UNKNOWN", Wearout: "N/A"},
		},
		ZFSPools: []proxmoxtest.ZFSPool{
			{Name: "tank", Health: "DEGRADED", Size: 4 << 40, Alloc: 1 << 40, Free: 3 << 40, Frag: 12, Errors: "No known data errors",
				Status: "One or more devices could not be used because the label is missing or invalid.", Action: "Replace the device using 'zpool replace'."},
			{Name: "rpool", Health: "ONLINE", Size: 1 << 40, Alloc: 1 << 30, Free: 1<<40 - 1<<30, Scan: "scrub repaired 0B in 00:01:02 with 0 errors"},
		},
	}
	c.Replication = []*proxmoxtest.ReplicationJob{
		{Guest: 100, JobNum: 0, Target: "pve2", LastSync: 1764547200, LastTry: 1764550800, FailCount: 3, Duration: 1.5,
			Error: "command 'zfs snapshot rpool/data/vm-100-disk-0@__replicate_100-0_1764550800__' failed: exit code 1"},
		{Guest: 200, JobNum: 1, Target: "pve2", Schedule: "*/30", LastSync: 1764550800, LastTry: 1764550800, Duration: 0.8},
		// Guest 105 lives on pve2: the job is listed there, never on pve1.
		{Guest: 105, JobNum: 0, Target: "pve1", LastSync: 1764550800, LastTry: 1764550800},
	}
	return c
}

func TestNodeHealth(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, healthCluster(), nil)
	res, err := e.client.NodeHealth(t.Context(), proxmoxsafe.NodeHealthInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	got := reqLines(e.requests())
	slices.Sort(got)
	want := []string{"GET /nodes/pve1/apt/update", "GET /nodes/pve1/disks/list", "GET /nodes/pve1/disks/zfs",
		"GET /nodes/pve1/disks/zfs/rpool", "GET /nodes/pve1/disks/zfs/tank", "GET /nodes/pve1/replication", "GET /nodes/pve1/services"}
	if !slices.Equal(got, want) {
		t.Errorf("requests = %v\nwant %v", got, want)
	}
	if !res.Reachable || res.Node != "pve1" {
		t.Errorf("result = %+v", res)
	}
	u := res.Updates
	if u.Status != proxmoxsafe.PartOK || u.Count != 61 || len(u.Packages) != proxmoxsafe.MaxHealthPackages ||
		u.Packages[0].Package != "lib00" || u.Packages[0].OldVersion != "1.0" {
		t.Errorf("updates = %+v", u)
	}
	if s := res.Services; s.Status != proxmoxsafe.PartOK || s.Total != 19 || !slices.Equal(s.Failed, []string{"postfix"}) || s.Services[0].Name != "chrony" {
		t.Errorf("services = %+v", s)
	}
	d := res.Disks
	if d.Status != proxmoxsafe.PartOK || d.Total != 3 || len(d.Disks) != 3 {
		t.Fatalf("disks = %+v", d)
	}
	nvme, sda, sdb := d.Disks[0], d.Disks[1], d.Disks[2]
	if nvme.DevPath != "/dev/nvme0n1" || nvme.Failing || nvme.Wearout == nil || *nvme.Wearout != 7 || nvme.Used != "ZFS" {
		t.Errorf("nvme = %+v", nvme)
	}
	if sda.Failing || sda.Wearout != nil || sda.Health != "UNKNOWN" {
		t.Errorf("a disk without SMART = %+v", sda)
	}
	// "N/A" is no wear-out, and the model is sanitized.
	if !sdb.Failing || sdb.Wearout != nil || sdb.Health != "FAILED!" || strings.ContainsRune(sdb.Model, 0x1b) {
		t.Errorf("failing disk = %+v", sdb)
	}
	z := res.ZFS
	if z.Status != proxmoxsafe.PartOK || z.Total != 2 || z.Pools[0].Name != "rpool" || !z.Pools[0].Detail || z.Pools[0].Errors != "No known data errors" ||
		!strings.HasPrefix(z.Pools[0].Scan, "scrub repaired") {
		t.Errorf("zfs = %+v", z)
	}
	if tank := z.Pools[1]; tank.State != "DEGRADED" || !strings.Contains(tank.Action, "zpool replace") || tank.Frag != 12 {
		t.Errorf("tank = %+v", tank)
	}
	r := res.Replication
	if r.Status != proxmoxsafe.PartOK || r.Total != 2 || len(r.Jobs) != 2 {
		t.Fatalf("replication = %+v", r)
	}
	failing, ok := r.Jobs[0], r.Jobs[1]
	if failing.ID != "100-0" || failing.VMID != 100 || failing.Type != proxmoxsafe.TypeQEMU || failing.FailCount != 3 || !strings.Contains(failing.Error, "zfs snapshot") ||
		!failing.LastSync.Equal(time.Unix(1764547200, 0)) || failing.Schedule != "*/15" || !failing.NextSync.Equal(time.Unix(1764550800+15*60, 0)) {
		t.Errorf("failing job = %+v", failing)
	}
	if ok.ID != "200-1" || ok.Type != proxmoxsafe.TypeLXC || ok.FailCount != 0 || ok.Error != "" || ok.Schedule != "*/30" {
		t.Errorf("healthy job = %+v", ok)
	}
}

// TestNodeHealthWithoutPrivileges: a token without Sys.Modify gets every
// part but the updates, which say so; one with Sys.Audit on the node only
// loses the ZFS pools (Sys.Audit on /) too; replication jobs of guests the
// token cannot see are left out, as Proxmox does.
func TestNodeHealthWithoutPrivileges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		privs map[string][]string
		zfs   string
		jobs  int
	}{
		{"no Sys.Modify", map[string][]string{"/": {"Sys.Audit", "VM.Audit"}}, proxmoxsafe.PartOK, 2},
		{"Sys.Audit on the node only", map[string][]string{"/nodes/pve1": {"Sys.Audit"}, "/vms/200": {"VM.Audit"}}, proxmoxsafe.PartNotPermitted, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := healthCluster()
			c.Tokens["automation@pve!mcp"].Privileges = tc.privs
			e := newEnvWith(t, c, nil)
			res, err := e.client.NodeHealth(t.Context(), proxmoxsafe.NodeHealthInput{Node: "pve1"})
			if err != nil {
				t.Fatal(err)
			}
			if u := res.Updates; u.Status != proxmoxsafe.PartNotPermitted || u.Problem != "the token lacks Sys.Modify on /nodes/pve1" || u.Count != 0 || u.Packages == nil {
				t.Errorf("updates = %+v", u)
			}
			if res.Services.Status != proxmoxsafe.PartOK || res.Disks.Status != proxmoxsafe.PartOK || res.Disks.Total != 3 || !res.Reachable {
				t.Errorf("services %+v, disks %+v", res.Services.HealthPart, res.Disks.HealthPart)
			}
			if res.ZFS.Status != tc.zfs {
				t.Errorf("zfs = %+v, want %s", res.ZFS.HealthPart, tc.zfs)
			}
			if tc.zfs == proxmoxsafe.PartNotPermitted && res.ZFS.Problem != "the token lacks Sys.Audit on /" {
				t.Errorf("zfs problem = %q", res.ZFS.Problem)
			}
			if res.Replication.Status != proxmoxsafe.PartOK || res.Replication.Total != tc.jobs {
				t.Errorf("replication = %+v, want %d jobs", res.Replication, tc.jobs)
			}
			if got := nonGET(e); len(got) != 0 {
				t.Errorf("non-GET requests: %v", got)
			}
		})
	}
}

// TestNodeHealthOffline: an allowlisted node Proxmox cannot reach is an
// answer, not an error.
func TestNodeHealthOffline(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, healthCluster(), func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = []string{"pve1", "pve3"} })
	res, err := e.client.NodeHealth(t.Context(), proxmoxsafe.NodeHealthInput{Node: "pve3"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reachable {
		t.Error("an offline node is reachable")
	}
	for name, p := range map[string]proxmoxsafe.HealthPart{"updates": res.Updates.HealthPart, "services": res.Services.HealthPart,
		"disks": res.Disks.HealthPart, "zfs": res.ZFS.HealthPart, "replication": res.Replication.HealthPart} {
		if p.Status != proxmoxsafe.PartOffline || !strings.Contains(p.Problem, "595") {
			t.Errorf("%s = %+v", name, p)
		}
	}
	if len(e.requests()) != 5 {
		t.Errorf("requests = %v, want the five reads and no pool detail", reqLines(e.requests()))
	}
}

func TestNodeHealthZFSNotInstalled(t *testing.T) {
	t.Parallel()
	c := healthCluster()
	c.Nodes[1].Health = &proxmoxtest.NodeHealth{NoZFSUtils: true}
	e := newEnvWith(t, c, nil)
	res, err := e.client.NodeHealth(t.Context(), proxmoxsafe.NodeHealthInput{Node: "pve2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ZFS.Status != proxmoxsafe.PartNotInstalled || len(res.ZFS.Pools) != 0 {
		t.Errorf("zfs = %+v", res.ZFS)
	}
	// pve2's own job, and the default services of a node without a model.
	if res.Replication.Total != 1 || res.Replication.Jobs[0].ID != "105-0" || res.Services.Total != 19 || len(res.Services.Failed) != 0 {
		t.Errorf("replication %+v, services %+v", res.Replication, res.Services)
	}
}

// TestNodeHealthRefusals: an invalid node or one off the allowlist sends
// nothing.
func TestNodeHealthRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		node string
		kind error
	}{{"pve3", proxmoxsafe.ErrNotAllowed}, {"-bad", proxmoxsafe.ErrInvalidInput}, {"", proxmoxsafe.ErrInvalidInput}} {
		e := newEnvWith(t, healthCluster(), nil)
		_, err := e.client.NodeHealth(t.Context(), proxmoxsafe.NodeHealthInput{Node: tc.node})
		if !errors.Is(err, tc.kind) {
			t.Errorf("%q: err = %v, want %v", tc.node, err, tc.kind)
		}
		if n := len(e.requests()); n != 0 {
			t.Errorf("%q: %d requests, want none", tc.node, n)
		}
	}
}
