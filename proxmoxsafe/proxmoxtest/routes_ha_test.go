package proxmoxtest

import (
	"slices"
	"strings"
	"testing"
)

func TestHAStatusAndResources(t *testing.T) {
	t.Parallel()
	s := newDemo(t) // guest 101 is HA-managed on pve1
	st := listOf(t, get(t, s, "/cluster/ha/status/current"))
	var ids []string
	for _, e := range st {
		ids = append(ids, e["id"].(string))
	}
	if !slices.Equal(ids, []string{"quorum", "master", "lrm:pve1", "lrm:pve2", "lrm:pve3", "service:vm:101"}) {
		t.Fatalf("ids = %v", ids)
	}
	if st[0]["quorate"] != 1.0 || st[0]["status"] != "OK" {
		t.Errorf("quorum = %v", st[0])
	}
	svc := st[5]
	if svc["sid"] != "vm:101" || svc["node"] != "pve1" || svc["state"] != "started" || svc["request_state"] != "started" ||
		svc["status"] != "vm:101 (pve1, started)" || svc["failback"] != 1.0 {
		t.Errorf("service = %v", svc)
	}
	if !strings.HasPrefix(st[2]["status"].(string), "pve1 (active, ") || !strings.HasPrefix(st[3]["status"].(string), "pve2 (idle, ") {
		t.Errorf("lrm = %v / %v", st[2], st[3])
	}
	res := listOf(t, get(t, s, "/cluster/ha/resources"))
	if len(res) != 1 || res[0]["sid"] != "vm:101" || res[0]["type"] != "vm" || res[0]["state"] != "started" || res[0]["max_restart"] != 1.0 {
		t.Errorf("resources = %v", res)
	}
	if got := listOf(t, get(t, s, "/cluster/ha/resources?type=ct")); len(got) != 0 {
		t.Errorf("type=ct = %v", got)
	}
	s.SetNodeOnline("pve1", false)
	st = listOf(t, get(t, s, "/cluster/ha/status/current"))
	if st[len(st)-1]["crm_state"] != "fence" {
		t.Errorf("service on a dead node = %v", st[len(st)-1])
	}
	s.AddToken("a@pve!vm", &Token{Secret: "s", Privileges: map[string][]string{"/vms": {"VM.Audit"}}})
	if a := call(t, s, "GET", "/cluster/ha/status/current", nil, tokenAuth("a@pve!vm", "s")); a.status != "403 Permission check failed (/, Sys.Audit)" {
		t.Errorf("no privilege: %s", a.status)
	}
}

func TestHAUnused(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	for _, g := range c.Guests {
		g.HAManaged = false
	}
	s := NewServer(c)
	defer s.Close()
	st := listOf(t, get(t, s, "/cluster/ha/status/current"))
	if len(st) != 1 || st[0]["id"] != "quorum" {
		t.Errorf("HA never used: %v", st)
	}
}
