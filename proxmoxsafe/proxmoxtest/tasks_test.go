package proxmoxtest

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// upidFACTS is the decode regex from FACTS §4 (pve-common UPID.pm).
var upidFACTS = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`)

// upidOf returns the UPID of a successful mutation answer.
func upidOf(t *testing.T, a answer) string {
	t.Helper()
	if a.code != 200 {
		t.Fatalf("status %q, body %s", a.status, a.raw)
	}
	upid, _ := a.body["data"].(string)
	if !upidFACTS.MatchString(upid) {
		t.Fatalf("UPID %q does not match the FACTS regex", upid)
	}
	return upid
}

func taskStatus(t *testing.T, s *Server, node, upid string) map[string]any {
	t.Helper()
	a := get(t, s, "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status")
	if a.code != 200 {
		t.Fatalf("task status: %q %s", a.status, a.raw)
	}
	return a.body["data"].(map[string]any)
}

func taskLog(t *testing.T, s *Server, node, upid string) []string {
	t.Helper()
	a := get(t, s, "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/log?limit=0")
	var out []string
	for _, l := range a.body["data"].([]any) {
		out = append(out, l.(map[string]any)["t"].(string))
	}
	return out
}

// pollUntilStopped polls and returns the final status and the number of
// "running" answers seen.
func pollUntilStopped(t *testing.T, s *Server, node, upid string) (map[string]any, int) {
	t.Helper()
	for running := 0; running < 100; running++ {
		st := taskStatus(t, s, node, upid)
		if st["status"] == "stopped" {
			return st, running
		}
		if _, ok := st["exitstatus"]; ok {
			t.Fatalf("running task has exitstatus: %v", st)
		}
	}
	t.Fatal("task never stopped")
	return nil, 0
}

func TestUPIDFormat(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	upid := upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	m := upidFACTS.FindStringSubmatch(upid)
	if m[1] != "pve2" || m[6] != "qmstart" || m[7] != "103" || m[8] != DefaultTokenID {
		t.Errorf("UPID parts = %q", m[1:])
	}
	for _, hex := range m[3:6] {
		if hex != strings.ToUpper(hex) || len(hex) != 8 {
			t.Errorf("hex field %q is not 8 upper-case digits", hex)
		}
	}
	st := taskStatus(t, s, "pve2", upid)
	if st["user"] != "automation@pve" || st["tokenid"] != "mcp" || st["upid"] != upid || st["node"] != "pve2" || st["id"] != "103" {
		t.Errorf("token task status = %v", st)
	}
}

func TestTaskLifecycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		polls     int // TaskPolls option
		path      string
		form      url.Values
		node      string
		vmid      int
		wantExit  string
		wantState string // guest status after the task
		wantSnaps int
	}{
		{"qemu start", 0, "/nodes/pve2/qemu/103/status/start", nil, "pve2", 103, "OK", "running", 0},
		{"qemu start three polls", 3, "/nodes/pve2/qemu/103/status/start", nil, "pve2", 103, "OK", "running", 0},
		{"qemu start immediately", -1, "/nodes/pve2/qemu/103/status/start", nil, "pve2", 103, "OK", "running", 0},
		{"qemu start running fails in task", 0, "/nodes/pve1/qemu/100/status/start", nil, "pve1", 100, "VM 100 already running", "running", 2},
		{"qemu start template fails in task", 0, "/nodes/pve2/qemu/105/status/start", nil, "pve2", 105, "you can't start a vm if it's a template", "stopped", 0},
		{"qemu stop locked fails in task", 0, "/nodes/pve1/qemu/102/status/stop", nil, "pve1", 102, "VM is locked (backup)", "running", 0},
		{"qemu shutdown", 0, "/nodes/pve1/qemu/100/status/shutdown", url.Values{"timeout": {"30"}, "forceStop": {"1"}}, "pve1", 100, "OK", "stopped", 2},
		{"qemu stop stopped is OK", 0, "/nodes/pve2/qemu/103/status/stop", nil, "pve2", 103, "OK", "stopped", 0},
		{"lxc shutdown", 0, "/nodes/pve1/lxc/200/status/shutdown", nil, "pve1", 200, "OK", "stopped", 0},
		{"lxc start template fails in task", -1, "/nodes/pve3/lxc/203/status/start", nil, "pve3", 203, "you can't start a CT if it's a template", "stopped", 0},
		{"snapshot", 0, "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"s1"}, "vmstate": {"1"}}, "pve1", 100, "OK", "running", 3},
		{"snapshot duplicate", 0, "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"pre-upgrade"}}, "pve1", 100, "snapshot name 'pre-upgrade' already used", "running", 2},
		{"snapshot template", 0, "/nodes/pve2/qemu/105/snapshot", url.Values{"snapname": {"s1"}}, "pve2", 105, "you can't take a snapshot if it's a template", "stopped", 0},
		{"snapshot locked", 0, "/nodes/pve1/qemu/102/snapshot", url.Values{"snapname": {"s1"}}, "pve1", 102, "VM is locked (backup)", "running", 0},
		{"lxc snapshot", 0, "/nodes/pve2/lxc/204/snapshot", url.Values{"snapname": {"s2"}, "description": {"x"}}, "pve2", 204, "OK", "running", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewUnstartedServer(DemoCluster())
			s.TaskPolls = tt.polls
			s.StartTLS()
			defer s.Close()
			before, _ := s.Guest(tt.vmid)
			upid := upidOf(t, post(t, s, tt.path, tt.form))
			if tt.polls >= 0 {
				// Before the task stops, the model is unchanged.
				if g, _ := s.Guest(tt.vmid); g.Status != before.Status || len(g.Snapshots) != len(before.Snapshots) {
					t.Fatalf("effect applied before the task stopped: %+v", g)
				}
			}
			st, running := pollUntilStopped(t, s, tt.node, upid)
			wantRunning := map[int]int{0: 1, -1: 0}[tt.polls]
			if tt.polls > 0 {
				wantRunning = tt.polls
			}
			if running != wantRunning {
				t.Errorf("answered running %d times, want %d", running, wantRunning)
			}
			if st["exitstatus"] != tt.wantExit {
				t.Errorf("exitstatus = %v, want %q", st["exitstatus"], tt.wantExit)
			}
			g, _ := s.Guest(tt.vmid)
			if g.Status != tt.wantState || len(g.Snapshots) != tt.wantSnaps {
				t.Errorf("guest status %q with %d snapshots, want %q with %d", g.Status, len(g.Snapshots), tt.wantState, tt.wantSnaps)
			}
			log := taskLog(t, s, tt.node, upid)
			last := log[len(log)-1]
			want := "TASK OK"
			if tt.wantExit != "OK" {
				want = "TASK ERROR: " + tt.wantExit
			}
			if last != want {
				t.Errorf("last log line = %q, want %q", last, want)
			}
		})
	}
}

func TestFailNextTask(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.FailNextTask("WARNINGS: 2")
	s.FailNextTask("storage 'local-lvm' is not online")
	up1 := upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	up2 := upidOf(t, post(t, s, "/nodes/pve1/lxc/200/status/stop", nil))
	st1, _ := pollUntilStopped(t, s, "pve2", up1)
	st2, _ := pollUntilStopped(t, s, "pve1", up2)
	if st1["exitstatus"] != "WARNINGS: 2" || st2["exitstatus"] != "storage 'local-lvm' is not online" {
		t.Fatalf("exit statuses = %v, %v", st1["exitstatus"], st2["exitstatus"])
	}
	if g, _ := s.Guest(103); g.Status != "running" {
		t.Error("a task with warnings must still do its work")
	}
	if g, _ := s.Guest(200); g.Status != "running" {
		t.Error("a failed task must not change the guest")
	}
	if log := taskLog(t, s, "pve2", up1); log[len(log)-1] != "TASK WARNINGS: 2" || len(log) != 3 {
		t.Errorf("warnings log = %q", log)
	}
}

func TestHADelay(t *testing.T) {
	t.Parallel()
	for _, delay := range []int{0, 1, 3, -1} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			s := NewUnstartedServer(DemoCluster())
			s.HADelayPolls = delay
			s.TaskPolls = 5 // ha tasks ignore it
			s.StartTLS()
			defer s.Close()
			upid := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/shutdown", nil))
			if !strings.Contains(upid, ":hastop:101:") {
				t.Fatalf("UPID %q is not an hastop task", upid)
			}
			st := taskStatus(t, s, "pve1", upid)
			if st["status"] != "stopped" || st["exitstatus"] != "OK" {
				t.Fatalf("ha task = %v, want stopped OK on first poll", st)
			}
			want := map[int]int{0: 2, -1: 0}[delay]
			if delay > 0 {
				want = delay
			}
			for i := range want + 1 {
				a := get(t, s, "/nodes/pve1/qemu/101/status/current")
				d := a.body["data"].(map[string]any)
				wantStatus := "running"
				if i == want {
					wantStatus = "stopped"
				}
				if d["status"] != wantStatus {
					t.Fatalf("read %d: status %v, want %s", i+1, d["status"], wantStatus)
				}
				ha := d["ha"].(map[string]any)
				if ha["managed"] != 1.0 || ha["state"] != "stopped" {
					t.Errorf("ha = %v", ha)
				}
			}
			up := upidOf(t, post(t, s, "/nodes/pve1/qemu/101/status/start", nil))
			if !strings.Contains(up, ":hastart:") {
				t.Errorf("start of HA guest gave %q", up)
			}
		})
	}
}

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

func TestFinishTasks(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	s.FinishTasks()
	if g, _ := s.Guest(103); g.Status != "running" {
		t.Errorf("status = %q after FinishTasks", g.Status)
	}
}
