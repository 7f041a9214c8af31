package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestCephStatusPresent(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	res, err := e.client.CephStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /cluster/ceph/status"}) {
		t.Errorf("requests = %v", got)
	}
	if !res.Installed || res.Health != "HEALTH_ERR" || res.Message != "" {
		t.Errorf("result = %+v", res)
	}
	var codes []string
	for _, c := range res.Checks {
		codes = append(codes, c.Code)
	}
	if !slices.Equal(codes, []string{"PG_AVAILABILITY", "MON_DOWN", "OSD_NEARFULL"}) || res.ChecksTotal != 3 {
		t.Errorf("checks = %v (errors first)", codes)
	}
	if c := res.Checks[1]; c.Summary != "1/3 mons down" || !slices.Equal(c.Details, []string{"mon.pve3 down"}) || c.Count != 1 {
		t.Errorf("MON_DOWN = %+v", c)
	}
	if m := res.Monitors; m.Count != 3 || !slices.Equal(m.InQuorum, []string{"pve1", "pve2"}) || !slices.Equal(m.OutOfQuorum, []string{"pve3"}) {
		t.Errorf("monitors = %+v", m)
	}
	if res.OSDs != (proxmoxsafe.CephOSDs{Total: 6, Up: 6, In: 6}) {
		t.Errorf("osds = %+v", res.OSDs)
	}
	if res.PGs.Total != 128 || res.PGs.States[0] != (proxmoxsafe.CephPGState{State: "active+clean", Count: 127}) {
		t.Errorf("pgs = %+v", res.PGs)
	}
	if res.Usage != (proxmoxsafe.CephUsage{Used: 4 << 40, Avail: 2 << 40, Total: 6 << 40}) {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func TestCephStatusAbsent(t *testing.T) {
	t.Parallel()
	for name, ceph := range map[string]*proxmoxtest.CephModel{
		"not installed":   nil,
		"not initialized": {NotInitialized: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := testCluster()
			c.Ceph = ceph
			e := newEnvWith(t, c, nil)
			res, err := e.client.CephStatus(t.Context())
			if err != nil {
				t.Fatalf("a cluster without Ceph is an answer, not an error: %v", err)
			}
			if res.Installed || !strings.Contains(res.Message, "Ceph is") || !strings.Contains(res.Message, name) || res.Checks == nil {
				t.Errorf("result = %+v", res)
			}
		})
	}
	// Other errors stay errors.
	c := testCluster()
	c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/vms": {"VM.Audit"}}
	e := newEnvWith(t, c, nil)
	if _, err := e.client.CephStatus(t.Context()); !errors.Is(err, proxmoxsafe.ErrForbidden) {
		t.Errorf("403: err = %v", err)
	}
}
