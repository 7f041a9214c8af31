package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

var fastWait = &proxmoxsafe.WaitOptions{Interval: time.Millisecond, MaxInterval: 5 * time.Millisecond}

func TestWaitTaskOK(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.client.TaskStatus(t.Context(), proxmoxsafe.TaskStatusInput{Node: "pve1", UPID: rec.UPID})
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
