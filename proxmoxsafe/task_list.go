package proxmoxsafe

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpListTasks is the name of [Client.ListTasks].
const OpListTasks Operation = "ListTasks"

// listTasksOp declares [Client.ListTasks].
var listTasksOp = operation{info: OperationInfo{
	Name:         OpListTasks,
	Method:       "GET",
	Route:        "/nodes/{node}/tasks",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathNode, Name: "Sys.Audit",
			Note: "without it only the token's own tasks are listed"},
	},
}}

// Bounds of [Client.ListTasks].
const (
	// DefaultTaskListLimit is the page size when ListTasksInput.Limit is 0
	// (Proxmox's own default).
	DefaultTaskListLimit = 50
	// MaxTaskListLimit caps ListTasksInput.Limit.
	MaxTaskListLimit = 500
	// MaxTaskListStart bounds ListTasksInput.Start: Proxmox reads its task
	// index from the start for every page, so deep paging is slow anyway.
	MaxTaskListStart = 100000
)

// ListTasksInput selects a node's recent tasks.
type ListTasksInput struct {
	// Node must be on the policy's node allowlist.
	Node string `json:"node" validate:"required,pve_node"`
	// VMID keeps only tasks of this guest.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Type keeps only tasks of this type, e.g. "qmstart" or "vzdump".
	Type string `json:"type,omitempty" validate:"omitempty,max=64,pve_tasktype" jsonschema:"e.g. vzdump."`
	// ErrorsOnly keeps only tasks that ended with an error.
	ErrorsOnly bool `json:"errors_only,omitempty"`
	// Limit is the page size: 0 means [DefaultTaskListLimit]; at most
	// [MaxTaskListLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=500" jsonschema:"Default 50."`
	// Start skips this many matching tasks (newest first), to page on
	// with [ListTasksResult.NextStart].
	Start int `json:"start,omitempty" validate:"min=0,max=100000"`
}

// ListTasksResult is one page of a node's tasks, newest first.
type ListTasksResult struct {
	Node  string     `json:"node"`
	Tasks []TaskInfo `json:"tasks"`
	// Total counts the tasks that matched on the node, on all pages.
	Total int `json:"total"`
	// NextStart is the Start of the next page; 0 on the last page.
	NextStart int `json:"next_start,omitempty"`
}

// TaskInfo is one task of a node's task list. Strings are sanitized.
type TaskInfo struct {
	UPID string `json:"upid"`
	// Type is the task type, e.g. "qmstart", "vzdump", "hastart".
	Type string `json:"type"`
	// ID is usually the VMID; it may be empty.
	ID string `json:"id"`
	// User started the task; an API token shows as "user@realm!token".
	User string `json:"user"`
	// Status is "running" or "stopped" ("unknown" if Proxmox gave none).
	Status string `json:"status"`
	// ExitStatus is set once stopped: "OK", "WARNINGS: <n>" or the error.
	ExitStatus string `json:"exitstatus,omitempty"`
	// Failed is true when the task stopped with an error exit status.
	Failed    bool      `json:"failed"`
	StartTime time.Time `json:"start_time"`
	// EndTime is zero while the task runs.
	EndTime time.Time `json:"end_time,omitzero"`
}

type rawTaskEntry struct {
	UPID      pve.String `json:"upid"`
	Type      pve.String `json:"type"`
	ID        pve.String `json:"id"`
	User      pve.String `json:"user"`
	TokenID   pve.String `json:"tokenid"`
	Status    pve.String `json:"status"`
	StartTime pve.Int    `json:"starttime"`
	EndTime   pve.Int    `json:"endtime"`
}

// ListTasks lists a node's recent tasks, newest first, running ones
// included (GET /nodes/{node}/tasks with source=all, one request), with
// optional guest, type and errors-only filters, one page at a time.
// Proxmox lists only the token's own tasks unless it has Sys.Audit on the
// node. The node must be on the allowlist; nothing is sent otherwise.
func (c *Client) ListTasks(ctx context.Context, in ListTasksInput) (*ListTasksResult, error) {
	const op = "ListTasks"
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	attrs := []slog.Attr{slog.String("node", in.Node)}
	if err := c.policy.checkNode(in.Node); err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultTaskListLimit
	}
	q := url.Values{
		"source": {"all"},
		"start":  {strconv.Itoa(in.Start)},
		"limit":  {strconv.Itoa(limit)},
	}
	if in.VMID != 0 {
		q.Set("vmid", strconv.Itoa(in.VMID))
	}
	if in.Type != "" {
		q.Set("typefilter", in.Type)
	}
	if in.ErrorsOnly {
		q.Set("errors", "1")
	}
	var raw []rawTaskEntry
	total, err := c.getTotal(ctx, pve.Path("nodes", in.Node, "tasks"), q, &raw)
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	if len(raw) > limit {
		raw = raw[:limit] // Proxmox honours limit; never trust it for the bound
	}
	res := &ListTasksResult{Node: in.Node, Tasks: make([]TaskInfo, 0, len(raw))}
	for _, r := range raw {
		res.Tasks = append(res.Tasks, taskInfo(r))
	}
	res.Total = max(total, in.Start+len(res.Tasks))
	if next := in.Start + len(res.Tasks); len(res.Tasks) > 0 && next < res.Total {
		res.NextStart = next
	}
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

func taskInfo(r rawTaskEntry) TaskInfo {
	t := TaskInfo{
		UPID: line(string(r.UPID), maxUPIDLen),
		Type: line(string(r.Type), 64),
		ID:   line(string(r.ID), 64),
		User: string(r.User),
	}
	if r.TokenID != "" {
		// Proxmox splits a token's id into user and tokenid in task lists.
		t.User += "!" + string(r.TokenID)
	}
	t.User = line(t.User, 128)
	switch status := exitStatusText(string(r.Status)); status {
	case "RUNNING":
		t.Status = "running"
	case "":
		t.Status = "unknown"
	default:
		t.Status = "stopped"
		t.ExitStatus = status
		t.Failed = !exitStatusOK(status)
	}
	if r.StartTime > 0 {
		t.StartTime = time.Unix(int64(r.StartTime), 0).UTC()
	}
	if r.EndTime > 0 && t.Status != "running" {
		t.EndTime = time.Unix(int64(r.EndTime), 0).UTC()
	}
	return t
}
