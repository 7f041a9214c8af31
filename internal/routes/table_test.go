package routes

import (
	"net/url"
	"slices"
	"testing"
)

// TestClasses: the names the tables know, gateway classes included, and a
// route list for every class that is not the gateway's.
func TestClasses(t *testing.T) {
	t.Parallel()
	want := []string{"backup", "config", "destroy", "gateway", "gateway-write", "migrate", "power", "power-extra", "provision", "responder", "restore", "snapshot", "snapshot-admin"}
	if got := Classes(); !slices.Equal(got, want) {
		t.Errorf("Classes() = %q, want %q", got, want)
	}
	for cl, rs := range classRoutes {
		if len(rs) == 0 {
			t.Errorf("class %q has no route", cl)
		}
	}
	if _, ok := classRoutes[classGateway]; ok {
		t.Error("the gateway's routes are gatewayRoute's, not a pattern list")
	}
}

// TestReadRoutesAreGets: every route open to every policy is a GET, so
// read-only mode (no class) sends nothing else; the one GET a class owns
// (migrate's precheck, config's pending) is in its class.
func TestReadRoutesAreGets(t *testing.T) {
	t.Parallel()
	for _, r := range readRoutes {
		if r.method != "GET" {
			t.Errorf("read route %s %s is not a GET", r.method, r.prefix)
		}
	}
}

// TestExtractConfigRouteNeedsABackupVolume: the restore class reads an
// archive's configuration only with one volume=<backup volume id>; any
// other form of the request falls to the deny list.
func TestExtractConfigRouteNeedsABackupVolume(t *testing.T) {
	t.Parallel()
	a := NewAllowlist([]string{"restore"}, map[string]bool{"pve1": true}, false)
	vol := "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"
	if v := a.Check("GET", "/nodes/pve1/vzdump/extractconfig", "volume="+url.QueryEscape(vol)); !v.Allowed {
		t.Errorf("the restore's read refused: %+v", v)
	}
	for _, q := range []string{"", "volume=local:iso/x.iso", "volume=" + url.QueryEscape(vol) + "&volume=" + url.QueryEscape(vol), "volume=" + url.QueryEscape(vol) + "&x=1"} {
		if v := a.Check("GET", "/nodes/pve1/vzdump/extractconfig", q); v.Allowed {
			t.Errorf("?%s allowed", q)
		}
	}
	if v := NewAllowlist([]string{"provision"}, map[string]bool{"pve1": true}, false).Check("GET", "/nodes/pve1/vzdump/extractconfig", "volume="+url.QueryEscape(vol)); v.Allowed {
		t.Error("allowed without the restore class")
	}
}
