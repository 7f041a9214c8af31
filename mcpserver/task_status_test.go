package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestTaskStatusTool: task_status says in one line whether the task runs,
// finished or failed (with Proxmox's exit status) and how much of the log
// is attached; the structured report carries the same.
func TestTaskStatusTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	failed := f.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "100", ExitStatus: "VM 100 already running", Log: []string{"starting"}})
	running := f.fake.AddTask(proxmoxtest.Task{Node: "pve2", Type: "vzstop", ID: "201"})
	for _, tt := range []struct {
		task proxmoxtest.Task
		want string
	}{
		{failed, "Task qmstart 100 on pve1 failed: VM 100 already running (last 2 of 2 log lines attached)"},
		{running, "Task vzstop 201 on pve2 is still running"},
	} {
		res := f.call(t, t.Context(), ToolTaskStatus, map[string]any{"node": tt.task.Node, "upid": tt.task.UPID})
		if txt := text(t, res); res.IsError || !strings.HasPrefix(txt, tt.want) {
			t.Errorf("task_status %s: %v %q, want %q", tt.task.UPID, res.IsError, txt, tt.want)
		}
		var out proxmoxsafe.TaskStatusReport
		structured(t, res, &out)
		if out.Task.Node != tt.task.Node || out.Failed != (tt.task.ExitStatus != "" && tt.task.ExitStatus != "OK") {
			t.Errorf("structured = %+v", out)
		}
	}
}
