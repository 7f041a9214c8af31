package proxmoxtest

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
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

func TestFinishTasks(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	s.FinishTasks()
	if g, _ := s.Guest(103); g.Status != "running" {
		t.Errorf("status = %q after FinishTasks", g.Status)
	}
}

// TaskDuration ends tasks by elapsed time; the clock is passed in, so the
// test needs no sleep.
func TestTaskDurationEndsTasksWithoutPolls(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(DemoCluster())
	s.TaskDuration = 5 * time.Second
	s.StartTLS()
	defer s.Close()
	if a := post(t, s, "/nodes/pve1/qemu/100/status/stop", nil); a.code != http.StatusOK {
		t.Fatalf("stop: %s", a.status)
	}
	tasks := s.Tasks()
	if len(tasks) != 1 || tasks[0].Status != "running" {
		t.Fatalf("tasks = %+v", tasks)
	}
	s.mu.Lock()
	start := s.tasks[0].began // to the nanosecond: the UPID's seconds would end it up to 1 s early
	s.finishDueTasks(start.Add(4 * time.Second))
	s.mu.Unlock()
	if st := s.Tasks()[0].Status; st != "running" {
		t.Fatalf("after 4s the task is %s, want running", st)
	}
	s.mu.Lock()
	s.finishDueTasks(start.Add(5*time.Second - time.Nanosecond))
	if st := s.tasks[0].Status; st != "running" {
		t.Errorf("a nanosecond before 5s the task is %s, want running", st)
	}
	s.finishDueTasks(start.Add(5 * time.Second))
	s.mu.Unlock()
	got := s.Tasks()[0]
	if got.Status != "stopped" || got.ExitStatus != "OK" || !strings.HasSuffix(got.Log[len(got.Log)-1], "TASK OK") {
		t.Fatalf("after 5s the task is %+v, want stopped OK", got)
	}
	if g, _ := s.Guest(100); g.Status != "stopped" {
		t.Errorf("guest 100 is %s; the task's effect was not applied", g.Status)
	}
}
