package proxmoxtest

import (
	"testing"
)

// TestLXCInterfaces: a running container answers its interfaces, a
// stopped one {"data": null}; the shape follows the version (legacy keys
// only before 8.4, like the recorded pve8 answer; 501 on 7.4).
func TestLXCInterfaces(t *testing.T) {
	t.Parallel()
	c := agentCluster()
	c.Guests = append(c.Guests, &Guest{VMID: 201, Node: "pve1", Type: "lxc", Name: "off", Status: "stopped"})
	s := NewServer(c)
	t.Cleanup(s.Close)
	a := get(t, s, "/nodes/pve1/lxc/200/interfaces")
	nics, ok := a.body["data"].([]any)
	if a.code != 200 || !ok || len(nics) != 2 {
		t.Fatalf("running CT: %q %s", a.status, a.raw)
	}
	eth0 := nics[1].(map[string]any)
	want := map[string]any{"name": "eth0", "hwaddr": "bc:24:11:00:00:c8", "hardware-address": "bc:24:11:00:00:c8",
		"inet": "10.0.0.200/8", "inet6": "fe80::be24:11ff:fe00:c8/64"}
	for k, v := range want {
		if eth0[k] != v {
			t.Errorf("eth0 %s = %v, want %v", k, eth0[k], v)
		}
	}
	addrs := eth0["ip-addresses"].([]any)
	if len(addrs) != 2 || addrs[0].(map[string]any)["ip-address-type"] != "inet" || addrs[1].(map[string]any)["ip-address-type"] != "inet6" {
		t.Errorf("ip-addresses = %v, want inet then inet6", addrs)
	}
	if a := get(t, s, "/nodes/pve1/lxc/201/interfaces"); a.code != 200 || a.body["data"] != nil {
		t.Errorf("stopped CT: %q %s, want 200 {\"data\":null}", a.status, a.raw)
	}
	if a := get(t, s, "/nodes/pve1/lxc/100/interfaces"); a.status != "500 Configuration file 'nodes/pve1/lxc/100.conf' does not exist" {
		t.Errorf("a VM's vmid: %q", a.status)
	}

	old := agentCluster()
	old.Version = "8.1.4"
	s8 := NewServer(old)
	t.Cleanup(s8.Close)
	got := get(t, s8, "/nodes/pve1/lxc/200/interfaces").body["data"].([]any)
	rec := loadRecording(t, "pve8/lxc-interfaces.json").([]any)
	for i := range rec {
		g := got[i].(map[string]any)
		compareShape(t, "8.1 interface", rec[i].(map[string]any), g, nil)
		if _, ok := g["ip-addresses"]; ok {
			t.Errorf("8.1 answers ip-addresses (pve-container 5.2.6 added them): %v", g)
		}
	}

	v7 := agentCluster()
	v7.Version = "7.4-16"
	s7 := NewServer(v7)
	t.Cleanup(s7.Close)
	if a := get(t, s7, "/nodes/pve1/lxc/200/interfaces"); a.code != 501 {
		t.Errorf("7.4: %q, want 501 (the endpoint is new in 8.0)", a.status)
	}
}
