package proxmoxtest

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// returnsRequests has one request per non-GET route that the fake answers
// 200, so TestWriteReturnsType can compare the answer's JSON type with the
// schema's returns: a UPID string, null or an object.
var returnsRequests = map[string]struct {
	path string
	form url.Values
}{
	"POST /nodes/{node}/qemu/{vmid}/snapshot":                     {"/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"s1"}}},
	"POST /nodes/{node}/qemu/{vmid}/status/shutdown":              {"/nodes/pve1/qemu/100/status/shutdown", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/reboot":                {"/nodes/pve1/qemu/100/status/reboot", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/reset":                 {"/nodes/pve1/qemu/100/status/reset", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/suspend":               {"/nodes/pve1/qemu/100/status/suspend", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/resume":                {"/nodes/pve2/qemu/104/status/resume", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/start":                 {"/nodes/pve2/qemu/103/status/start", nil},
	"POST /nodes/{node}/qemu/{vmid}/status/stop":                  {"/nodes/pve1/qemu/100/status/stop", nil},
	"POST /nodes/{node}/lxc/{vmid}/snapshot":                      {"/nodes/pve1/lxc/200/snapshot", url.Values{"snapname": {"s1"}}},
	"POST /nodes/{node}/lxc/{vmid}/status/start":                  {"/nodes/pve3/lxc/202/status/start", nil},
	"POST /nodes/{node}/lxc/{vmid}/status/stop":                   {"/nodes/pve1/lxc/200/status/stop", nil},
	"POST /nodes/{node}/lxc/{vmid}/status/shutdown":               {"/nodes/pve1/lxc/200/status/shutdown", nil},
	"POST /nodes/{node}/lxc/{vmid}/status/reboot":                 {"/nodes/pve1/lxc/200/status/reboot", nil},
	"POST /nodes/{node}/lxc/{vmid}/status/suspend":                {"/nodes/pve1/lxc/200/status/suspend", nil},
	"POST /nodes/{node}/lxc/{vmid}/status/resume":                 {"/nodes/pve3/lxc/202/status/resume", nil},
	"POST /nodes/{node}/qemu/{vmid}/agent/ping":                   {"/nodes/pve1/qemu/100/agent/ping", nil},
	"DELETE /nodes/{node}/qemu/{vmid}/snapshot/{snapname}":        {"/nodes/pve1/qemu/100/snapshot/weekly-2025-01", nil},
	"DELETE /nodes/{node}/lxc/{vmid}/snapshot/{snapname}":         {"/nodes/pve2/lxc/204/snapshot/before-migration", nil},
	"POST /nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback": {"/nodes/pve3/qemu/107/snapshot/clean-install/rollback", nil},
	"POST /nodes/{node}/lxc/{vmid}/snapshot/{snapname}/rollback":  {"/nodes/pve2/lxc/204/snapshot/before-migration/rollback", nil},
	"POST /nodes/{node}/qemu":                                     {"/nodes/pve1/qemu", url.Values{"vmid": {"300"}}},
	"POST /nodes/{node}/lxc":                                      {"/nodes/pve1/lxc", url.Values{"vmid": {"301"}, "ostemplate": {DemoTemplate}, "rootfs": {"local-lvm:8"}}},
	"POST /nodes/{node}/qemu/{vmid}/clone":                        {"/nodes/pve2/qemu/105/clone", url.Values{"newid": {"300"}}},
	"POST /nodes/{node}/lxc/{vmid}/clone":                         {"/nodes/pve3/lxc/203/clone", url.Values{"newid": {"301"}}},
	"DELETE /nodes/{node}/storage/{storage}/content/{volume}":     {"/nodes/pve1/storage/local/content/local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", nil},
	"POST /nodes/{node}/vzdump":                                   {"/nodes/pve1/vzdump", url.Values{"vmid": {"100"}, "storage": {"local"}}},
	"DELETE /nodes/{node}/qemu/{vmid}":                            {"/nodes/pve2/qemu/103", nil},
	"DELETE /nodes/{node}/lxc/{vmid}":                             {"/nodes/pve3/lxc/202", nil},
	"POST /nodes/{node}/qemu/{vmid}/migrate":                      {"/nodes/pve3/qemu/107/migrate", url.Values{"target": {"pve2"}}},
	"POST /nodes/{node}/lxc/{vmid}/migrate":                       {"/nodes/pve3/lxc/202/migrate", url.Values{"target": {"pve1"}}},
	"PUT /nodes/{node}/qemu/{vmid}/config":                        {"/nodes/pve2/qemu/103/config", url.Values{"cores": {"2"}}},
	"POST /nodes/{node}/qemu/{vmid}/config":                       {"/nodes/pve2/qemu/103/config", url.Values{"cores": {"2"}}},
	"PUT /nodes/{node}/lxc/{vmid}/config":                         {"/nodes/pve1/lxc/200/config", url.Values{"cores": {"2"}}},
	"PUT /nodes/{node}/qemu/{vmid}/resize":                        {"/nodes/pve2/qemu/103/resize", url.Values{"disk": {"scsi0"}, "size": {"+1G"}}},
	"PUT /nodes/{node}/lxc/{vmid}/resize":                         {"/nodes/pve1/lxc/200/resize", url.Values{"disk": {"rootfs"}, "size": {"+1G"}}},
}

// returnsCheckedElsewhere are write routes whose answer another test
// compares with the schema and a recording.
var returnsCheckedElsewhere = map[string]string{
	"POST /access/ticket": "TestTicketLoginShapes",
}

// TestWriteReturnsType: every non-GET route the fake serves answers data
// of the JSON type its PVE 9.1 schema "returns" declares (a worker's UPID
// string, null for a synchronous change, an object), and a string that
// the schema calls the task ID is a UPID. A new write route needs a
// request in returnsRequests.
func TestWriteReturnsType(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	for _, rt := range routes() {
		key := rt.method + " " + rt.path
		if rt.method == http.MethodGet || returnsCheckedElsewhere[key] != "" {
			continue
		}
		req, ok := returnsRequests[key]
		if !ok {
			t.Errorf("%s: no request in returnsRequests, so its answer's type is unchecked", key)
			continue
		}
		want := schema[key].ReturnsType
		s := newDemo(t)
		a := call(t, s, rt.method, req.path, req.form, "")
		if a.code != http.StatusOK {
			t.Errorf("%s %s: %s %s, want 200", rt.method, req.path, a.status, a.raw)
			continue
		}
		data := a.body["data"]
		if got := jsonType(data); got != want && !(want == "integer" && got == "number") {
			t.Errorf("%s %s: data %s is a %s, schema returns %q", rt.method, req.path, a.raw, got, want)
		}
		if up, ok := data.(string); ok && !upidRE.MatchString(up) {
			t.Errorf("%s %s: data %q is not a UPID", rt.method, req.path, up)
		}
	}
}

// TestInfraReturnsDeclared: what our storage, Ceph and HA endpoints return
// is declared by the 9.1 schema, apart from the documented real extras.
func TestInfraReturnsDeclared(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	s := newDemo(t)
	extras := map[string][]string{
		// pve-storage list_volumes also returns these (rec6 storage-content-backup.json has content).
		"/nodes/{node}/storage/{storage}/content": {"content", "subtype"},
		// The 9.1 index declares only sid; real entries are the resources.cfg sections (Resources.pm api_copy_config).
		"/cluster/ha/resources": {"type", "state", "max_restart", "max_relocate", "failback", "digest"},
	}
	for tmpl, p := range map[string]string{
		"/nodes/{node}/storage":                   "/nodes/pve1/storage",
		"/nodes/{node}/storage/{storage}/content": "/nodes/pve1/storage/local/content",
		"/cluster/ha/status/current":              "/cluster/ha/status/current",
		"/cluster/ha/resources":                   "/cluster/ha/resources",
	} {
		declared := schema["GET "+tmpl].Returns
		if declared == nil {
			t.Errorf("GET %s: the schema facts declare no properties", tmpl)
		}
		for _, e := range listOf(t, get(t, s, p)) {
			for k := range e {
				if !slices.Contains(declared, k) && !slices.Contains(extras[tmpl], k) {
					t.Errorf("GET %s returns %q, not declared by the schema", p, k)
				}
			}
		}
	}
}
