package proxmoxsafe

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// OpTaskLog is the name of [Client.TaskLog].
const OpTaskLog Operation = "TaskLog"

// taskLogOp declares [Client.TaskLog].
var taskLogOp = operation{info: OperationInfo{
	Name:         OpTaskLog,
	Method:       "GET",
	Route:        "/nodes/{node}/tasks/{upid}/log",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathNode, Name: "Sys.Audit",
			Note: "tasks the token started itself are readable without it"},
	},
}}

// Bounds of [Client.TaskLog].
const (
	// DefaultTaskLogLines is how many lines TaskLog returns when
	// TaskLogInput.Lines is 0.
	DefaultTaskLogLines = 50
	// MaxTaskLogLines caps TaskLogInput.Lines.
	MaxTaskLogLines = 500
	// MaxTaskLogLineLen caps each log line in bytes.
	MaxTaskLogLineLen = 512
)

// TaskLogInput selects a task and how much of the end of its log to read.
type TaskLogInput struct {
	// Node must be on the allowlist and be the node the UPID names.
	Node string `json:"node" validate:"required,pve_node" jsonschema:"The UPID's node."`
	// UPID is the task id, e.g. from a [Receipt].
	UPID string `json:"upid" validate:"required,max=255,pve_upid"`
	// Lines is how many lines to return from the end of the log: 0 means
	// [DefaultTaskLogLines]; at most [MaxTaskLogLines].
	Lines int `json:"lines,omitempty" validate:"min=0,max=500" jsonschema:"Default 50."`
}

// TaskLogResult is the end of a task's log.
type TaskLogResult struct {
	UPID string  `json:"upid"`
	Task TaskRef `json:"task"`
	// Lines are the last lines of the log, oldest first.
	Lines []TaskLogLine `json:"lines"`
	// Total is the number of lines the log has. Proxmox answers an empty
	// log with the single line "no content".
	Total int `json:"total"`
}

// TaskLogLine is one line of a task log. Text is sanitized and capped at
// [MaxTaskLogLineLen] bytes; values of --password, secret=, token: and
// similar arguments are replaced by [RedactedValue] (best effort: task logs
// quote command lines, and Proxmox does not mask them).
type TaskLogLine struct {
	// N is the line number, counted from 1.
	N    int    `json:"n"`
	Text string `json:"text"`
}

type rawLogLine struct {
	N pve.Int    `json:"n"`
	T pve.String `json:"t"`
}

// taskLine sanitizes and caps one log line and redacts secret-looking
// arguments, after sanitizing: a character sanitizing strips inside a
// name ("pass\u200bword=x") would otherwise hide the name from redaction
// and then disappear, leaving the secret readable.
func taskLine(s string) string {
	return line(redact.SecretArgs(sanitize.Line(s)), MaxTaskLogLineLen)
}

// TaskLog returns the last lines of a task's log, with the log's total line
// count. It takes one request when the log has at most the asked-for number
// of lines, and two otherwise (the first learns the total, the second reads
// the end). The node must be allowlisted and match the UPID.
func (c *Client) TaskLog(ctx context.Context, in TaskLogInput) (*TaskLogResult, error) {
	const op = "TaskLog"
	start := time.Now()
	ref, err := c.checkTask(in)
	attrs := []slog.Attr{slog.String("node", in.Node), slog.String("upid", line(in.UPID, maxUPIDLen))}
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	res, err := c.taskLog(ctx, in, ref)
	return res, c.logged(ctx, op, start, err, attrs...)
}

func (c *Client) taskLog(ctx context.Context, in TaskLogInput, ref TaskRef) (*TaskLogResult, error) {
	n := in.Lines
	if n == 0 {
		n = DefaultTaskLogLines
	}
	path := pve.Path("nodes", ref.Node, "tasks", in.UPID, "log")
	read := func(from int) ([]rawLogLine, int, error) {
		var lines []rawLogLine
		total, err := c.getTotal(ctx, path, url.Values{"start": {strconv.Itoa(from)}, "limit": {strconv.Itoa(n)}}, &lines)
		return lines, total, err
	}
	lines, total, err := read(0)
	if err != nil {
		return nil, err
	}
	if total < 0 {
		// No "total" (not seen in any version): what was read is all we know.
		total = len(lines)
	}
	if total > n {
		// A log still growing may have more lines by now; these n lines
		// are then not quite the last, which the next call shows.
		var total2 int
		if lines, total2, err = read(total - n); err != nil {
			return nil, err
		}
		total = max(total, total2)
	}
	res := &TaskLogResult{UPID: in.UPID, Task: ref, Total: max(total, 0), Lines: make([]TaskLogLine, 0, min(len(lines), n))}
	// Proxmox honours limit; a server that did not must not blow the bound.
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for _, l := range lines {
		res.Lines = append(res.Lines, TaskLogLine{N: int(l.N), Text: taskLine(string(l.T))})
	}
	return res, nil
}

// getTotal is get for the list endpoints that also answer a top-level
// "total"; it returns -1 as the total when the answer has none.
func (c *Client) getTotal(ctx context.Context, path string, query url.Values, out any) (int, error) {
	p := &pve.Paged{Data: out}
	if err := c.get(ctx, path, query, p); err != nil {
		return 0, err
	}
	return p.Total, nil
}
