package proxmoxsafe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"
)

type rawTaskStatus struct {
	Status     pve.String `json:"status"`
	ExitStatus pve.String `json:"exitstatus"`
}

// maxUPIDLen bounds UPIDs accepted from callers.
const maxUPIDLen = upid.MaxLen

// TaskStatus reads the status of one task. node must be on the allowlist and
// must be the node the UPID names.
func (c *Client) TaskStatus(ctx context.Context, node, id string) (*TaskStatusResult, error) {
	start := time.Now()
	ref, err := c.checkTask(node, id)
	if err != nil {
		return nil, c.logged(ctx, "TaskStatus", start, err)
	}
	res, err := c.taskStatus(ctx, id, ref)
	return res, c.logged(ctx, "TaskStatus", start, err)
}

func (c *Client) checkTask(node, id string) (TaskRef, error) {
	var fields []FieldError
	if !ValidNode(node) {
		fields = append(fields, FieldError{Field: "node", Problem: "must be a Proxmox node name"})
	}
	var u upid.UPID
	if len(id) > maxUPIDLen {
		fields = append(fields, FieldError{Field: "upid", Problem: "is too long to be a UPID"})
	} else if p, err := upid.Parse(id); err != nil {
		fields = append(fields, FieldError{Field: "upid", Problem: "is not a valid UPID (UPID:node:pid:pstart:starttime:type:id:user:)"})
	} else {
		u = p
		if len(fields) == 0 && u.Node != node {
			fields = append(fields, FieldError{Field: "node", Problem: "does not match the node named in the UPID (" + u.Node + ")"})
		}
	}
	if len(fields) > 0 {
		return TaskRef{}, &ValidationError{Fields: fields}
	}
	if err := c.policy.checkNode(node); err != nil {
		return TaskRef{}, err
	}
	return TaskRef{Node: u.Node, Type: u.Type, ID: u.ID, User: u.User, StartTime: u.StartTime, PID: u.PID}, nil
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
		ExitStatus: line(string(raw.ExitStatus), maxErrorText),
	}, nil
}

// WaitOptions tunes [Client.WaitTask]. The zero value polls after 250 ms,
// backing off by half each time up to 5 s, until ctx ends.
type WaitOptions struct {
	// Interval is the first pause between polls; zero means 250 ms.
	Interval time.Duration
	// MaxInterval caps the back-off; zero means 5 s.
	MaxInterval time.Duration
	// Timeout, when positive, bounds the whole wait in addition to ctx.
	Timeout time.Duration
}

// WaitTask polls a task until it stops. It returns the final status and nil
// when the exit status is "OK" or "WARNINGS: n"; for any other exit status it
// returns the status and a *[TaskError] (matching [ErrTaskFailed]). If ctx
// ends or the timeout passes first, it returns the last status seen with the
// context's error. The node is taken from the UPID and must be allowlisted.
func (c *Client) WaitTask(ctx context.Context, id string, opts *WaitOptions) (*TaskStatusResult, error) {
	start := time.Now()
	u, err := upid.Parse(id)
	if err != nil || len(id) > maxUPIDLen {
		return nil, c.logged(ctx, "WaitTask", start, &ValidationError{Fields: []FieldError{{Field: "upid", Problem: "is not a valid UPID"}}})
	}
	ref, err := c.checkTask(u.Node, id)
	if err != nil {
		return nil, c.logged(ctx, "WaitTask", start, err)
	}
	var o WaitOptions
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = 5 * time.Second
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	res, err := c.poll(ctx, id, ref, o)
	if err != nil && errors.Is(err, ctx.Err()) {
		// A bare "context deadline exceeded" names neither the task nor
		// what was known of it.
		known := "its status was not read yet"
		if res != nil {
			known = "still " + res.Status
		}
		err = fmt.Errorf("stopped waiting for task %s after %s (%s): %w", id, time.Since(start).Round(time.Millisecond), known, err)
	}
	return res, c.logged(ctx, "WaitTask", start, err)
}

func (c *Client) poll(ctx context.Context, id string, ref TaskRef, o WaitOptions) (*TaskStatusResult, error) {
	b := newBackoff(o.Interval, o.MaxInterval)
	var last *TaskStatusResult
	for b.wait(ctx) {
		st, err := c.taskStatus(ctx, id, ref)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = st
		if !st.Running() {
			if st.Succeeded() {
				return st, nil
			}
			return st, &TaskError{UPID: id, ExitStatus: st.ExitStatus}
		}
	}
	return last, ctx.Err()
}

// backoff paces the polls of [Client.WaitTask] and [Client.Verify]: the
// first poll at once, then the interval, growing by half up to a maximum.
type backoff struct {
	next, max time.Duration
	first     bool
	timer     *time.Timer
}

func newBackoff(interval, max time.Duration) *backoff {
	return &backoff{next: interval, max: max, first: true}
}

// wait sleeps until the next poll and reports false when ctx ended first.
// It stops its timer before returning, so nothing outlives the wait.
func (b *backoff) wait(ctx context.Context) bool {
	if b.first {
		b.first = false
		return ctx.Err() == nil
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(b.next+b.next/2, b.max)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
