package proxmoxtest

import (
	"io"
	"net/http"
	"testing"
)

func TestClusterResources(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.SetNodeOnline("pve3", false)
	s.AddToken("ops@pve!few", &Token{Secret: "x", Privileges: map[string][]string{"/vms/100": {"VM.Audit"}, "/vms/200": {"VM.Audit"}}})
	all := get(t, s, "/cluster/resources?type=vm").body["data"].([]any)
	if len(all) != 13 {
		t.Fatalf("%d guests", len(all))
	}
	byID := map[string]map[string]any{}
	for _, e := range all {
		m := e.(map[string]any)
		byID[m["id"].(string)] = m
	}
	if e := byID["qemu/100"]; e["tags"] != "prod;web" || e["vmid"] != 100.0 || e["template"] != 0.0 {
		t.Errorf("qemu/100 = %v", e)
	}
	if _, ok := byID["lxc/202"]["tags"]; ok {
		t.Error("empty tags must be absent")
	}
	if _, ok := byID["qemu/100"]["lock"]; ok {
		t.Error("empty lock must be absent")
	}
	if byID["qemu/102"]["lock"] != "backup" || byID["qemu/101"]["hastate"] != "started" || byID["qemu/105"]["template"] != 1.0 {
		t.Error("lock/hastate/template")
	}
	if _, ok := byID["qemu/100"]["hastate"]; ok {
		t.Error("hastate on a non-HA guest")
	}
	if e := byID["qemu/106"]; e["status"] != "unknown" || e["cpu"] != nil {
		t.Errorf("guest on offline node = %v", e)
	}
	nodes := get(t, s, "/cluster/resources?type=node").body["data"].([]any)
	if n := nodes[2].(map[string]any); n["status"] != "offline" || n["mem"] != nil {
		t.Errorf("offline node = %v", n)
	}
	few := call(t, s, "GET", "/cluster/resources", nil, "PVEAPIToken=ops@pve!few=x").body["data"].([]any)
	guests := 0
	for _, e := range few {
		m := e.(map[string]any)
		switch m["type"] {
		case "qemu", "lxc":
			guests++
		case "node":
			if _, ok := m["mem"]; ok {
				t.Error("node stats without Sys.Audit")
			}
		}
	}
	if guests != 2 {
		t.Errorf("restricted token sees %d guests, want 2", guests)
	}
	cs := get(t, s, "/cluster/status").body["data"].([]any)
	if c := cs[0].(map[string]any); c["quorate"] != 1.0 || c["nodes"] != 3.0 {
		t.Errorf("cluster entry %v", c)
	}
	s.SetNodeOnline("pve2", false)
	cs = get(t, s, "/cluster/status").body["data"].([]any)
	if c := cs[0].(map[string]any); c["quorate"] != 0.0 {
		t.Errorf("1 of 3 online must not be quorate: %v", c)
	}
}

func TestStandalone(t *testing.T) {
	t.Parallel()
	s := NewServer(GenerateCluster(1, 3, 1))
	defer s.Close()
	cs := get(t, s, "/cluster/status").body["data"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["nodeid"] != 0.0 || cs[0].(map[string]any)["type"] != "node" {
		t.Errorf("standalone status = %v", cs)
	}
}

func BenchmarkClusterResources10k(b *testing.B) {
	s := NewServer(GenerateCluster(100, 100, 1))
	defer s.Close()
	cl := s.Client()
	req, _ := http.NewRequest("GET", s.URL+"/api2/json/cluster/resources", nil)
	req.Header.Set("Authorization", defaultAuth)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := cl.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func TestPoolInResources(t *testing.T) {
	t.Parallel()
	s := NewServer(agentCluster())
	t.Cleanup(s.Close)
	for _, e := range get(t, s, "/cluster/resources?type=vm").body["data"].([]any) {
		m := e.(map[string]any)
		want := map[float64]any{200: "prod-pool"}[m["vmid"].(float64)]
		if m["pool"] != want {
			t.Errorf("guest %v: pool %v, want %v", m["vmid"], m["pool"], want)
		}
	}
}
