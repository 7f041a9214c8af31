package proxmoxtest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

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
	start := time.Unix(tasks[0].StartTime, 0)
	s.mu.Lock()
	s.finishDueTasks(start.Add(4 * time.Second))
	s.mu.Unlock()
	if st := s.Tasks()[0].Status; st != "running" {
		t.Fatalf("after 4s the task is %s, want running", st)
	}
	s.mu.Lock()
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
