package proxmoxsafe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"
)

// OpTaskStatus is the name of [Client.TaskStatus].
const OpTaskStatus Operation = "TaskStatus"

// taskStatusOp declares [Client.TaskStatus].
var taskStatusOp = operation{info: OperationInfo{
	Name:         OpTaskStatus,
	Method:       "GET",
	Route:        "/nodes/{node}/tasks/{upid}/status",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathNode, Name: "Sys.Audit",
			Note: "tasks the token started itself are readable without it"},
	},
}}

// TaskStatusResult is the state of a Proxmox task.
type TaskStatusResult struct {
	UPID string  `json:"upid"`
	Task TaskRef `json:"task"`
	// Status is "running" or "stopped".
	Status string `json:"status"`
	// ExitStatus is set once stopped: "OK", "WARNINGS: <n>" or an error text.
	ExitStatus string `json:"exitstatus,omitempty"`
}

// Running reports whether the task has not stopped yet.
func (t *TaskStatusResult) Running() bool { return t.Status != "stopped" }

// Succeeded reports whether the task stopped with "OK" or "WARNINGS: <n>".
func (t *TaskStatusResult) Succeeded() bool {
	return t.Status == "stopped" && exitStatusOK(t.ExitStatus)
}

func exitStatusOK(s string) bool {
	if s == "OK" {
		return true
	}
	var n int
	_, err := fmt.Sscanf(s, "WARNINGS: %d", &n)
	return err == nil && s == "WARNINGS: "+strconv.Itoa(n)
}

type rawTaskStatus struct {
	Status     pve.String `json:"status"`
	ExitStatus pve.String `json:"exitstatus"`
}

// MaxUPIDLen is the longest UPID accepted from callers.
const MaxUPIDLen = upid.MaxLen

// maxUPIDLen is MaxUPIDLen for this package's own caps.
const maxUPIDLen = MaxUPIDLen

// TaskStateInput names one task for [Client.TaskState].
type TaskStateInput struct {
	// Node must be on the allowlist and be the node the UPID names.
	Node string `json:"node" validate:"required,pve_node" jsonschema:"The UPID's node."`
	// UPID is the task id, e.g. from a [Receipt] or [Client.ListTasks].
	UPID string `json:"upid" validate:"required,max=255,pve_upid"`
}

// TaskState reads the status of one task, and nothing else (one GET;
// [Client.TaskStatus] adds the end of its log). The node must be on the
// allowlist and must be the node the UPID names; nothing is sent otherwise.
func (c *Client) TaskState(ctx context.Context, in TaskStateInput) (*TaskStatusResult, error) {
	const op = "TaskState"
	start := time.Now()
	ref, err := c.checkTask(in)
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	res, err := c.taskStatus(ctx, in.UPID, ref)
	return res, c.logged(ctx, op, start, err, slog.String("node", in.Node), slog.String("upid", in.UPID))
}

// checkTask validates a task input (its UPID's node must be its Node) and
// checks the node against the allowlist.
func (c *Client) checkTask(in any) (TaskRef, error) {
	if err := c.check(in); err != nil {
		return TaskRef{}, err
	}
	var node, id string
	switch in := in.(type) {
	case TaskStateInput:
		node, id = in.Node, in.UPID
	case TaskLogInput:
		node, id = in.Node, in.UPID
	}
	if err := c.policy.checkNode(node); err != nil {
		return TaskRef{}, err
	}
	return taskRefOf(id), nil
}

// taskRefOf parses a UPID the validator accepted.
func taskRefOf(id string) TaskRef {
	u, _ := upid.Parse(id)
	return TaskRef{Node: u.Node, Type: u.Type, ID: u.ID, User: u.User, StartTime: u.StartTime, PID: u.PID}
}

func (c *Client) taskStatus(ctx context.Context, id string, ref TaskRef) (*TaskStatusResult, error) {
	var raw rawTaskStatus
	if err := c.get(ctx, pve.Path("nodes", ref.Node, "tasks", id, "status"), nil, &raw); err != nil {
		return nil, err
	}
	return &TaskStatusResult{
		UPID:       id,
		Task:       ref,
		Status:     line(string(raw.Status), 16),
		ExitStatus: exitStatusText(string(raw.ExitStatus)),
	}, nil
}

// WaitTaskInput names the task [Client.WaitTask] waits for.
type WaitTaskInput struct {
	// UPID is the task id; the node it names must be on the allowlist.
	UPID string `json:"upid" validate:"required,max=255,pve_upid"`
}

// WaitTask polls a task until it stops. It returns the final status and nil
// when the exit status is "OK" or "WARNINGS: n"; for any other exit status it
// returns the status and a *[TaskError] (matching [ErrTaskFailed]). If ctx
// ends or the timeout passes first (see [WaitOptions]; opts may be nil), it
// returns the last status seen with the context's error. The node is taken
// from the UPID and must be allowlisted.
//
// WaitTask knows only the task: for an HA-managed guest the ha* task ends
// OK before the guest changes state. To learn whether a mutation took
// effect, use [Client.Verify] or the Wait field of the mutation's input.
func (c *Client) WaitTask(ctx context.Context, in WaitTaskInput, opts *WaitOptions) (*TaskStatusResult, error) {
	const op = OpWaitTask
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	ref := taskRefOf(in.UPID)
	ref, err := c.checkTask(TaskStateInput{Node: ref.Node, UPID: in.UPID})
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	o, err := c.waitOptions(opts)
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	timeout, _ := c.effectiveTimeout(o.Timeout)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.poll(wctx, in.UPID, ref, o, start, timeout)
	if err != nil && errors.Is(err, wctx.Err()) {
		// A bare "context deadline exceeded" names neither the task nor
		// what was known of it.
		known := "its status was not read yet"
		if res != nil {
			known = "still " + res.Status
		}
		err = fmt.Errorf("stopped waiting for task %s after %s (%s): %w", in.UPID, time.Since(start).Round(time.Millisecond), known, err)
	}
	return res, c.logged(ctx, op, start, err, slog.String("upid", in.UPID))
}

func (c *Client) poll(ctx context.Context, id string, ref TaskRef, o WaitOptions, start time.Time, timeout time.Duration) (*TaskStatusResult, error) {
	b := newBackoff(o.Interval, o.MaxInterval)
	var last *TaskStatusResult
	polls := 0
	for b.wait(ctx) {
		st, err := c.taskStatus(ctx, id, ref)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = st
		polls++
		if !st.Running() {
			if st.Succeeded() {
				return st, nil
			}
			return st, &TaskError{UPID: id, ExitStatus: st.ExitStatus}
		}
		if o.OnProgress != nil {
			o.OnProgress(Progress{Phase: ProgressTaskRunning, Message: "task " + ref.Type + " still running", Poll: polls, Elapsed: time.Since(start), Timeout: timeout})
		}
	}
	return last, ctx.Err()
}

// TaskStatusReport is a task's status with the end of its log.
type TaskStatusReport struct {
	TaskStatusResult
	// Log is the end of the task's log.
	Log TaskLogResult `json:"log"`
	// Failed is true when the task stopped with an error exit status
	// (neither "OK" nor "WARNINGS: n").
	Failed bool `json:"failed"`
}

// TaskStatus reads a task's status and then the last lines of its log
// (the log is read second, so a stopped task's log includes its final
// "TASK …" line). It is what the task_status tool shows. At most three
// requests; the node must be allowlisted and match the UPID.
func (c *Client) TaskStatus(ctx context.Context, in TaskLogInput) (*TaskStatusReport, error) {
	const op = OpTaskStatus
	start := time.Now()
	ref, err := c.checkTask(in)
	attrs := []slog.Attr{slog.String("node", in.Node), slog.String("upid", line(in.UPID, maxUPIDLen))}
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	st, err := c.taskStatus(ctx, in.UPID, ref)
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	log, err := c.taskLog(ctx, in, ref)
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	res := &TaskStatusReport{TaskStatusResult: *st, Log: *log, Failed: !st.Running() && !st.Succeeded()}
	attrs = append(attrs, slog.String("status", st.Status))
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// exitStatusText is a task's exit status as shown: one line, capped, and
// redacted by the rule every upstream string of the gateway gets
// (redactText): an error text may quote the command that failed, with
// its arguments. "OK", "WARNINGS: n" and "RUNNING" are left as they are.
func exitStatusText(s string) string {
	return line(redactedLine(s), maxErrorText)
}
