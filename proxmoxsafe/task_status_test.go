package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var fastWait = &proxmoxsafe.WaitOptions{Interval: time.Millisecond, MaxInterval: 5 * time.Millisecond}

func TestWaitTaskOK(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.client.TaskState(t.Context(), proxmoxsafe.TaskStateInput{Node: "pve1", UPID: rec.UPID})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running() || st.Task.Type != "qmstart" {
		t.Errorf("first poll = %+v, want running qmstart", st)
	}
	st, err = e.client.WaitTask(t.Context(), proxmoxsafe.WaitTaskInput{UPID: rec.UPID}, fastWait)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running() || st.ExitStatus != "OK" || !st.Succeeded() {
		t.Errorf("final = %+v", st)
	}
	if g, _ := e.fake.Guest(101); g.Status != "running" {
		t.Errorf("guest 101 is %s after a successful start", g.Status)
	}
	for _, r := range e.requests() {
		if r.Method == "GET" && strings.Contains(r.Path, "/tasks/") && !strings.HasPrefix(r.Path, "/nodes/pve1/tasks/UPID:pve1:") {
			t.Errorf("task request %q not on the UPID's node", r.Path)
		}
	}
}

func TestWaitTaskWarningsSucceed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.FailNextTask("WARNINGS: 2")
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.client.WaitTask(t.Context(), proxmoxsafe.WaitTaskInput{UPID: rec.UPID}, fastWait)
	if err != nil || st.ExitStatus != "WARNINGS: 2" || !st.Succeeded() {
		t.Errorf("status %+v, err %v", st, err)
	}
}

func TestWaitTaskFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.FailNextTask("start failed: QEMU exited with code 1")
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.client.WaitTask(t.Context(), proxmoxsafe.WaitTaskInput{UPID: rec.UPID}, fastWait)
	var te *proxmoxsafe.TaskError
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !errors.As(err, &te) {
		t.Fatalf("err = %v, want a TaskError", err)
	}
	if te.ExitStatus != "start failed: QEMU exited with code 1" || st == nil || st.Succeeded() {
		t.Errorf("task error = %+v, status %+v", te, st)
	}
}

func TestWaitTaskTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
	if err != nil {
		t.Fatal(err)
	}
	// A task that never stops within the wait: a huge first interval.
	slow := &proxmoxsafe.WaitOptions{Interval: time.Hour, Timeout: time.Second}
	// The first poll happens at once and says "running"; then the timeout hits.
	st, err := e.client.WaitTask(t.Context(), proxmoxsafe.WaitTaskInput{UPID: rec.UPID}, slow)
	if !errors.Is(err, context.DeadlineExceeded) || st == nil || !st.Running() {
		t.Errorf("timeout: status %+v, err %v", st, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: rec.UPID}, fastWait); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestTaskStatusReport: TaskStatus, what the task_status tool shows, is the
// status with the end of the log.
func TestTaskStatusReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	failed := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "101", ExitStatus: "start failed: QEMU exited with code 1", Log: numbered(80)})
	r, err := e.client.TaskStatus(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: failed.UPID, Lines: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "stopped" || r.ExitStatus != "start failed: QEMU exited with code 1" || !r.Failed || r.Succeeded() {
		t.Errorf("status = %+v", r.TaskStatusResult)
	}
	if r.Log.Total != 81 || len(r.Log.Lines) != 3 || r.Log.Lines[2].Text != "TASK ERROR: start failed: QEMU exited with code 1" {
		t.Errorf("log = %+v", r.Log)
	}
	want := []string{"GET /nodes/pve1/tasks/" + failed.UPID + "/status", "GET /nodes/pve1/tasks/" + failed.UPID + "/log", "GET /nodes/pve1/tasks/" + failed.UPID + "/log"}
	if got := reqLines(e.requests()); !slices.Equal(got, want) {
		t.Errorf("requests = %v", got)
	}

	warn := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", ExitStatus: "WARNINGS: 2"})
	r, err = e.client.TaskStatus(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: warn.UPID})
	if err != nil || r.Failed || !r.Succeeded() {
		t.Errorf("warnings: %+v, %v", r, err)
	}
	running := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Log: []string{"starting"}})
	r, err = e.client.TaskStatus(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: running.UPID})
	if err != nil || r.Failed || !r.Running() || r.Log.Lines[0].Text != "starting" {
		t.Errorf("running: %+v, %v", r, err)
	}
}
