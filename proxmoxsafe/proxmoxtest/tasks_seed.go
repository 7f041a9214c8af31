package proxmoxtest

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// AddTask records a task as if the node had run it, so tests can read task
// lists and logs (history, other users' tasks, long logs) without driving a
// mutation for each. Fields of t that are zero get defaults: Type "qmstart",
// User "root@pam", StartTime now, Status "stopped" when ExitStatus is set
// and "running" otherwise, EndTime StartTime+1 for a stopped task. A stopped
// task's Log gets the final line Proxmox writes ("TASK OK", "TASK
// WARNINGS: n" or "TASK ERROR: <exit>") unless it already ends with one. A
// running task stays running until [Server.FinishTasks] or
// [Server.TaskDuration] ends it (then it ends OK).
// The UPID is always generated; AddTask returns the task as stored.
func (s *Server) AddTask(t Task) Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Type == "" {
		t.Type = "qmstart"
	}
	if t.User == "" {
		t.User = "root@pam"
	}
	if t.StartTime == 0 {
		t.StartTime = time.Now().Unix()
	}
	if t.Status == "" {
		t.Status = "running"
		if t.ExitStatus != "" {
			t.Status = "stopped"
		}
	}
	t.Log = append([]string(nil), t.Log...)
	if t.Status == "stopped" {
		if t.ExitStatus == "" {
			t.ExitStatus = "OK"
		}
		if t.EndTime == 0 {
			t.EndTime = t.StartTime + 1
		}
		if n := len(t.Log); n == 0 || !strings.HasPrefix(t.Log[n-1], "TASK ") {
			switch {
			case t.ExitStatus == "OK":
				t.Log = append(t.Log, "TASK OK")
			case warningsRE.MatchString(t.ExitStatus):
				t.Log = append(t.Log, "TASK "+t.ExitStatus)
			default:
				t.Log = append(t.Log, "TASK ERROR: "+t.ExitStatus)
			}
		}
	} else {
		t.ExitStatus, t.EndTime = "", 0
	}
	s.nextPID++
	p := upidParts{
		node: t.Node, pid: s.nextPID, pstart: s.pstartBase + s.nextPID,
		starttime: t.StartTime, typ: t.Type, id: t.ID, user: t.User,
	}
	t.UPID = encodeUPID(p)
	st := &task{
		Task: t, pid: p.pid, pstart: p.pstart, need: math.MaxInt32,
		run: func(*Cluster, *[]string) string { return "" },
	}
	s.tasks = append(s.tasks, st)
	s.taskByUPID[t.UPID] = st
	out := t
	out.Log = append([]string(nil), t.Log...)
	return out
}

// taskLogLines returns n numbered log lines "line 1" … "line n", a helper
// for building long logs.
func taskLogLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "line " + strconv.Itoa(i+1)
	}
	return out
}
