package proxmoxtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestErrorAnswers(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.SetNodeOnline("pve3", false)
	s.AddToken("viewer@pve!ro", &Token{Secret: "s3cret", Privileges: map[string][]string{"/vms/100": {"VM.Audit"}}})
	const viewer = "PVEAPIToken=viewer@pve!ro=s3cret"
	tests := []struct {
		name       string
		method     string
		path       string
		form       url.Values
		auth       string
		wantStatus string
		wantErrors map[string]string
	}{
		{"no ticket", "GET", "/version", nil, "-", "401 No ticket", nil},
		{"bad secret", "GET", "/version", nil, "PVEAPIToken=" + DefaultTokenID + "=wrong", "401 invalid token value!", nil},
		{"unknown token", "GET", "/version", nil, "PVEAPIToken=nobody@pve!x=y", "401 invalid token value!", nil},
		{"space form accepted", "GET", "/version", nil, "PVEAPIToken " + DefaultTokenID + "=" + DefaultTokenSecret, "200 OK", nil},
		{"unknown route", "GET", "/nodes/pve1/bogus", nil, "", "501 Method 'GET /nodes/pve1/bogus' not implemented", nil},
		{"wrong method", "DELETE", "/version", nil, "", "501 Method 'DELETE /version' not implemented", nil},
		{"config missing qemu", "GET", "/nodes/pve1/qemu/999/status/current", nil, "", "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist", nil},
		{"config missing wrong node", "GET", "/nodes/pve2/qemu/100/status/current", nil, "", "500 Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist", nil},
		{"config missing lxc", "GET", "/nodes/pve1/lxc/100/status/current", nil, "", "500 Configuration file 'nodes/pve1/lxc/100.conf' does not exist", nil},
		{"offline node", "GET", "/nodes/pve3/status", nil, "", "595 No route to host", nil},
		{"unknown node", "GET", "/nodes/nope/status", nil, "", "500 hostname lookup 'nope' failed - failed to get address info for: nope: Name or service not known", nil},
		{"invalid vmid", "GET", "/nodes/pve1/qemu/99/status/current", nil, "", "400 Parameter verification failed.",
			map[string]string{"vmid": "invalid format - value does not look like a valid VM ID\n"}},
		{"non-integer vmid", "GET", "/nodes/pve1/qemu/abc/status/current", nil, "", "400 Parameter verification failed.",
			map[string]string{"vmid": "type check ('integer') failed - got 'abc'"}},
		{"unknown param", "GET", "/cluster/resources?x=1", nil, "", "400 Parameter verification failed.",
			map[string]string{"x": "property is not defined in schema and the schema does not allow additional properties"}},
		{"bad enum", "GET", "/cluster/resources?type=pool", nil, "", "400 Parameter verification failed.",
			map[string]string{"type": "value 'pool' does not have a value in the enumeration 'vm, storage, node, sdn'"}},
		{"form bool must be 0/1", "POST", "/nodes/pve1/qemu/100/status/shutdown", url.Values{"forceStop": {"true"}}, "", "400 Parameter verification failed.",
			map[string]string{"forceStop": "type check ('boolean') failed - got 'true'"}},
		{"lxc has no vmstate", "POST", "/nodes/pve1/lxc/200/snapshot", url.Values{"snapname": {"s1"}, "vmstate": {"1"}}, "", "400 Parameter verification failed.",
			map[string]string{"vmstate": "property is not defined in schema and the schema does not allow additional properties"}},
		{"missing snapname", "POST", "/nodes/pve1/qemu/100/snapshot", url.Values{}, "", "400 Parameter verification failed.",
			map[string]string{"snapname": "property is missing and it is not optional"}},
		{"long snapname", "POST", "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"a" + strings.Repeat("b", 40)}}, "", "400 Parameter verification failed.",
			map[string]string{"snapname": "value may only be 40 characters long"}},
		{"duplicate param", "POST", "/nodes/pve1/qemu/100/status/start", url.Values{"vmid": {"101"}}, "", "400 Parameter verification failed.",
			map[string]string{"vmid": "duplicate parameter (already defined in URI) with conflicting values!"}},
		{"skiplock is root only", "POST", "/nodes/pve1/qemu/100/status/stop", url.Values{"skiplock": {"1"}}, "", "400 Parameter verification failed.",
			map[string]string{"skiplock": "Only root may use this option."}},
		{"reserved snapname", "POST", "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"current"}}, "", "500 unable to use snapshot name 'current' (reserved name)", nil},
		{"lxc start running", "POST", "/nodes/pve1/lxc/200/status/start", url.Values{}, "", "500 CT 200 already running", nil},
		{"power on offline node", "POST", "/nodes/pve3/lxc/202/status/stop", url.Values{}, "", "595 No route to host", nil},
		{"qemu reboot stopped", "POST", "/nodes/pve2/qemu/103/status/reboot", url.Values{}, "", "500 VM 103 not running", nil},
		{"qemu shutdown paused", "POST", "/nodes/pve2/qemu/104/status/shutdown", url.Values{}, "", "500 VM is paused - cannot shutdown", nil},
		{"403 power", "POST", "/nodes/pve1/qemu/100/status/stop", url.Values{}, viewer, "403 Permission check failed (/vms/100, VM.PowerMgmt)", nil},
		{"403 audit", "GET", "/nodes/pve1/qemu/101/status/current", nil, viewer, "403 Permission check failed (/vms/101, VM.Audit)", nil},
		{"403 node", "GET", "/nodes/pve1/status", nil, viewer, "403 Permission check failed (/nodes/pve1, Sys.Audit)", nil},
		{"403 cluster status", "GET", "/cluster/status", nil, viewer, "403 Permission check failed (/, Sys.Audit)", nil},
		{"bad upid", "GET", "/nodes/pve1/tasks/garbage/status", nil, "", "400 Parameter verification failed.",
			map[string]string{"upid": "unable to parse worker upid"}},
		{"unknown upid", "GET", "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:65000000:qmstart:100:root@pam:/status", nil, "", "400 Parameter verification failed.",
			map[string]string{"upid": "no such task"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := call(t, s, tt.method, tt.path, tt.form, tt.auth)
			if a.status != tt.wantStatus {
				t.Fatalf("status = %q, want %q (body %s)", a.status, tt.wantStatus, a.raw)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			if a.code == http.StatusOK {
				return
			}
			if _, ok := a.body["data"]; !ok || a.body["data"] != nil {
				t.Errorf("error body %s has no \"data\": null", a.raw)
			}
			// 9.1 servers (libpve-http-server-perl >= 5.2.0) add the message.
			if msg, _ := a.body["message"].(string); !strings.HasSuffix(msg, "\n") || !strings.HasPrefix(tt.wantStatus[4:], strings.TrimSuffix(msg, "\n")) {
				t.Errorf("message = %q, want the reason plus newline", msg)
			}
			var got map[string]string
			if e, ok := a.body["errors"]; ok {
				b, _ := json.Marshal(e)
				_ = json.Unmarshal(b, &got)
			}
			if len(got) != len(tt.wantErrors) {
				t.Fatalf("errors = %v, want %v", got, tt.wantErrors)
			}
			for k, v := range tt.wantErrors {
				if got[k] != v {
					t.Errorf("errors[%q] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestVersionDependentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version     string
		wantAuth    string
		wantMessage bool
	}{
		{"7.4-16", "401 invalid token value!", false},
		{"8.2.4", "401 invalid token value!", false},
		{"8.4.1", "401 invalid token value!", true},
		{"9.1.4", "401 invalid token value!", true},
		{"9.1.5", "401 Authentication failed!", true},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			c := DemoCluster()
			c.Version = tt.version
			s := NewServer(c)
			defer s.Close()
			a := call(t, s, "GET", "/version", nil, "PVEAPIToken=x@pve!y=z")
			if a.status != tt.wantAuth {
				t.Errorf("status = %q, want %q", a.status, tt.wantAuth)
			}
			if _, ok := a.body["message"]; ok != tt.wantMessage {
				t.Errorf("message present = %v, want %v (%s)", ok, tt.wantMessage, a.raw)
			}
		})
	}
}

// TestKeepsWorkingAfterErrors checks that hijacked error answers leave the
// client in a good state: many errors and successes interleaved on one client.
func TestKeepsWorkingAfterErrors(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	for i := range 20 {
		if i%2 == 0 {
			if a := get(t, s, "/nodes/pve1/qemu/999/status/current"); a.code != 500 {
				t.Fatalf("got %s", a.status)
			}
			continue
		}
		if a := get(t, s, "/version"); a.code != 200 {
			t.Fatalf("got %s", a.status)
		}
	}
}
