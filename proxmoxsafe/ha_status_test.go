package proxmoxsafe_test

import (
	"slices"
	"testing"
)

func TestHAStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil) // guest 105 on pve2 is HA-managed
	res, err := e.client.HAStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /cluster/ha/status/current", "GET /cluster/ha/resources"}) {
		t.Errorf("requests = %v", got)
	}
	if !res.Quorate || !res.InUse || res.Manager.Node != "pve1" || res.Total != 1 || len(res.LRMs) != 3 {
		t.Fatalf("result = %+v", res)
	}
	if l := res.LRMs[1]; l.Node != "pve2" || l.State != "active" {
		t.Errorf("lrm pve2 = %+v", l)
	}
	if l := res.LRMs[2]; l.State != "old timestamp - dead?" {
		t.Errorf("lrm of offline pve3 = %+v", l)
	}
	s := res.Services[0]
	if s.SID != "vm:105" || s.Type != "vm" || s.VMID != 105 || s.Node != "pve2" || s.State != "started" || s.RequestedState != "started" ||
		s.MaxRestart == nil || *s.MaxRestart != 1 || s.Failback == nil || !*s.Failback {
		t.Errorf("service = %+v", s)
	}
}

func TestHAStatusUnused(t *testing.T) {
	t.Parallel()
	c := testCluster()
	for _, g := range c.Guests {
		g.HAManaged = false
	}
	e := newEnvWith(t, c, nil)
	res, err := e.client.HAStatus(t.Context())
	if err != nil || res.InUse || !res.Quorate || len(res.Services) != 0 || res.Services == nil {
		t.Errorf("HA unused: %+v, %v", res, err)
	}
}
