package proxmoxtest

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// Task is a copy of a task the server started, as returned by [Server.Tasks].
type Task struct {
	UPID string
	Node string
	Type string // qmstart, vzstop, hastart, qmsnapshot, ...
	ID   string // the vmid
	User string // the full token id that started it, e.g. "automation@pve!mcp"
	// Status is "running" or "stopped".
	Status string
	// ExitStatus is "OK", "WARNINGS: <n>" or the error text; "" while running.
	ExitStatus string
	StartTime  int64
	EndTime    int64 // 0 while running
	// Log is the task log; once stopped it ends with "TASK OK",
	// "TASK WARNINGS: <n>" or "TASK ERROR: <msg>".
	Log []string
}

// task is the server-side task: the public view plus its lifecycle state.
type task struct {
	Task
	pid, pstart uint64
	polls       int // status polls answered so far
	// began is when the task started, to the nanosecond (StartTime is
	// Proxmox's seconds), for TaskDuration.
	began time.Time
	need  int // polls answered "running" before the task stops
	// run is the worker body, executed under the model write lock when the
	// task stops. It returns the error text ("" = success) and may append
	// log lines; its effect on the model must only happen on success.
	run func(c *Cluster, log *[]string) string
	// forced is an outcome queued with [Server.FailNextTask].
	forced *string
	// onError, when set, undoes what starting the task did (a guest being
	// created is removed again); it runs, under the write lock, whenever
	// the task ends with an error, forced or not.
	onError func(c *Cluster)
}

var warningsRE = lazyre.New(`^WARNINGS: (\d+)$`)

// FailNextTask queues an outcome for the next task the server starts (one
// queued outcome per task, in order). exit "WARNINGS: <n>" lets the task do
// its work and end with "TASK WARNINGS: <n>" after n "WARN:" log lines; any
// other text makes the task fail with that error ("TASK ERROR: <exit>")
// without changing the model. Synchronous (HTTP) errors are not affected:
// a request refused before a task exists does not consume the outcome.
func (s *Server) FailNextTask(exit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, exit)
}

// Tasks returns copies of all tasks the server started, oldest first.
func (s *Server) Tasks() []Task {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Task, len(s.tasks))
	for i, t := range s.tasks {
		out[i] = t.Task
		out[i].Log = slices.Clone(t.Log)
	}
	return out
}

// FinishTasks stops every running task now, applying its effect, as if each
// had been polled to completion. It helps tests and demos that do not poll.
func (s *Server) FinishTasks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tasks {
		if t.Status == "running" {
			s.stopTask(t)
		}
	}
}

// startTask creates a task; s.mu must be held for writing. need < 0 selects
// the server default from TaskPolls.
func (s *Server) startTask(node, typ string, vmid int, user string, need int, logLines []string, run func(c *Cluster, log *[]string) string) *task {
	return s.startTaskID(node, typ, strconv.Itoa(vmid), user, need, logLines, run)
}

// startTaskID is startTask for a task whose UPID id is not a plain vmid
// (imgdel: "<vmid>@<storage>"; a vzdump of several guests: "").
func (s *Server) startTaskID(node, typ, id string, user string, need int, logLines []string, run func(c *Cluster, log *[]string) string) *task {
	if need < 0 {
		need = s.taskPolls()
	}
	s.nextPID++
	now := time.Now()
	p := upidParts{
		node:      node,
		pid:       s.nextPID,
		pstart:    s.pstartBase + uint64(now.Sub(s.started)/(10*time.Millisecond)),
		starttime: now.Unix(),
		typ:       typ,
		id:        id,
		user:      user,
	}
	t := &task{
		Task: Task{
			UPID: encodeUPID(p), Node: node, Type: typ, ID: p.id, User: user,
			Status: "running", StartTime: p.starttime, Log: logLines,
		},
		pid: p.pid, pstart: p.pstart, need: need, run: run, began: now,
	}
	if len(s.outcomes) > 0 {
		o := s.outcomes[0]
		s.outcomes = s.outcomes[1:]
		t.forced = &o
	}
	s.tasks = append(s.tasks, t)
	s.taskByUPID[t.UPID] = t
	if need == 0 {
		s.stopTask(t)
	}
	return t
}

// taskPolls resolves the TaskPolls option: 0 = default 1, -1 = stop at once.
func (s *Server) taskPolls() int {
	switch {
	case s.TaskPolls == 0:
		return 1
	case s.TaskPolls < 0:
		return 0
	}
	return s.TaskPolls
}

// pollTask counts one status poll and stops the task once it has answered
// "running" often enough; s.mu must be held for writing.
func (s *Server) pollTask(t *task) {
	if t.Status != "running" {
		return
	}
	if t.polls >= t.need {
		s.stopTask(t)
		return
	}
	t.polls++
}

// finishDueTasks stops the tasks that have run for TaskDuration; s.mu must
// be held for writing.
func (s *Server) finishDueTasks(now time.Time) {
	if s.TaskDuration <= 0 {
		return
	}
	for _, t := range s.tasks {
		began := t.began
		if began.IsZero() { // a seeded task: only its UPID's seconds
			began = time.Unix(t.StartTime, 0)
		}
		if t.Status == "running" && !began.Add(s.TaskDuration).After(now) {
			s.stopTask(t)
		}
	}
}

// stopTask runs the worker body and records the exit status the way
// UPID.pm read_status derives it from the last log line.
func (s *Server) stopTask(t *task) {
	exit := ""
	switch {
	case t.forced != nil && warningsRE.MatchString(*t.forced):
		exit = t.run(s.cluster, &t.Log)
		if exit == "" {
			n, _ := strconv.Atoi(warningsRE.FindStringSubmatch(*t.forced)[1])
			for i := range n {
				t.Log = append(t.Log, "WARN: simulated warning "+strconv.Itoa(i+1))
			}
			exit = *t.forced
		}
	case t.forced != nil:
		exit = *t.forced
	default:
		exit = t.run(s.cluster, &t.Log)
	}
	switch {
	case exit == "":
		t.ExitStatus = "OK"
		t.Log = append(t.Log, "TASK OK")
	case warningsRE.MatchString(exit):
		t.ExitStatus = exit
		t.Log = append(t.Log, "TASK "+exit)
	default:
		if t.onError != nil {
			t.onError(s.cluster)
		}
		// read_status collapses the error to one line.
		msg := strings.TrimRight(exit, "\n")
		t.Log = append(t.Log, "TASK ERROR: "+msg)
		t.ExitStatus = strings.ReplaceAll(msg, "\n", " ")
	}
	t.Status = "stopped"
	t.EndTime = time.Now().Unix()
}

// isTaskError is status_is_error from UPID.pm.
func isTaskError(exit string) bool {
	return exit != "OK" && !warningsRE.MatchString(exit)
}
