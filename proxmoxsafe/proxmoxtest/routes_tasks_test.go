package proxmoxtest

import (
	"net/url"
	"testing"
)

func TestTaskListAndLog(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	up := upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	a := get(t, s, "/nodes/pve2/tasks?source=all")
	list := a.body["data"].([]any)
	if a.body["total"] != 1.0 || len(list) != 1 || list[0].(map[string]any)["status"] != "RUNNING" {
		t.Fatalf("active list = %s", a.raw)
	}
	if log := get(t, s, "/nodes/pve2/tasks/"+url.PathEscape(up)+"/log"); log.body["total"] != 1.0 ||
		log.body["data"].([]any)[0].(map[string]any)["t"] != "no content" {
		t.Errorf("running task log = %s", log.raw)
	}
	pollUntilStopped(t, s, "pve2", up)
	a = get(t, s, "/nodes/pve2/tasks")
	e := a.body["data"].([]any)[0].(map[string]any)
	if e["status"] != "OK" || e["endtime"] == nil || e["upid"] != up {
		t.Errorf("archive entry = %v", e)
	}
	if got := len(s.Tasks()); got != 1 {
		t.Errorf("Tasks() has %d entries", got)
	}
	// Another token without Sys.Audit cannot read the task.
	s.AddToken("other@pve!t", &Token{Secret: "x", Privileges: map[string][]string{"/vms": {"VM.Audit"}}})
	if a := call(t, s, "GET", "/nodes/pve2/tasks/"+url.PathEscape(up)+"/status", nil, "PVEAPIToken=other@pve!t=x"); a.status != "403 Permission check failed (/nodes/pve2, Sys.Audit)" {
		t.Errorf("foreign task status = %q", a.status)
	}
}
