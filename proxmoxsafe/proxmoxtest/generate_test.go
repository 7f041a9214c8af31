package proxmoxtest

import (
	"reflect"
	"testing"
)

func TestDemoCluster(t *testing.T) {
	t.Parallel()
	c := DemoCluster()
	var ha, tmpl, locked, snaps, injection int
	for _, g := range c.Guests {
		if g.HAManaged && g.Status == "running" && g.HAState == "started" {
			ha++
		}
		if g.Template && g.Status == "stopped" {
			tmpl++
		}
		if g.Lock == "backup" {
			locked++
		}
		if len(g.Snapshots) > 0 {
			snaps++
		}
		if g.Description == InjectionDescription {
			injection++
		}
	}
	if len(c.Nodes) != 3 || c.Name != "demo" || ha != 1 || tmpl < 1 || locked != 1 || snaps < 1 || injection != 1 {
		t.Errorf("demo cluster: ha=%d tmpl=%d locked=%d snaps=%d injection=%d", ha, tmpl, locked, snaps, injection)
	}
	if DemoCluster().Guests[0] == c.Guests[0] {
		t.Error("DemoCluster must return a fresh copy")
	}
}

func TestGenerateCluster(t *testing.T) {
	t.Parallel()
	a, b := GenerateCluster(100, 100, 1), GenerateCluster(100, 100, 1)
	if len(a.Guests) != 10000 {
		t.Fatalf("%d guests", len(a.Guests))
	}
	for i := range a.Guests {
		if !reflect.DeepEqual(a.Guests[i], b.Guests[i]) {
			t.Fatal("not deterministic")
		}
	}
	s := NewServer(a)
	defer s.Close()
	res := get(t, s, "/cluster/resources").body["data"].([]any)
	if len(res) < 10100 {
		t.Errorf("%d resources", len(res))
	}
}
