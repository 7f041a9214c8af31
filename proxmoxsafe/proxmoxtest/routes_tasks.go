package proxmoxtest

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// findTask resolves {upid} the way Tasks.pm does: unparsable and unknown
// UPIDs are parameter errors. A task is only found on its own node.
func findTask(rc *reqCtx) (*task, *apiError) {
	upid := rc.params["upid"]
	if _, ok := decodeUPID(upid); !ok {
		return nil, paramErr(map[string]string{"upid": "unable to parse worker upid"})
	}
	t := rc.s.taskByUPID[upid]
	if t == nil || t.Node != rc.params["node"] {
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	if t.User != rc.tokenID && !hasPriv(rc.token, "/nodes/"+t.Node, "Sys.Audit") {
		return nil, permErr("/nodes/"+t.Node, "Sys.Audit")
	}
	return t, nil
}

// taskEntry is the common task shape; token tasks have user split into user
// and tokenid ($convert_token_task in mgr Tasks.pm).
func taskEntry(t *task) map[string]any {
	e := map[string]any{
		"upid": t.UPID, "node": t.Node, "pid": t.pid, "pstart": t.pstart,
		"starttime": t.StartTime, "type": t.Type, "id": t.ID, "user": t.User,
	}
	if user, tok, ok := strings.Cut(t.User, "!"); ok {
		e["user"], e["tokenid"] = user, tok
	}
	return e
}

// handleTaskStatus counts a poll (tasks stop after TaskPolls polls) and
// answers the status; exitstatus only once stopped, no endtime.
func handleTaskStatus(rc *reqCtx) (any, *apiError) {
	t, aerr := findTask(rc)
	if aerr != nil {
		return nil, aerr
	}
	rc.s.pollTask(t)
	e := taskEntry(t)
	e["status"] = t.Status
	if t.Status == "stopped" {
		e["exitstatus"] = t.ExitStatus
	}
	return e, nil
}

// handleTaskLog is dump_logfile: lines numbered from 1, start/limit paging
// (limit 0 = all), "total" = lines in the log, "no content" for an empty log.
func handleTaskLog(rc *reqCtx) (any, *apiError) {
	t, aerr := findTask(rc)
	if aerr != nil {
		return nil, aerr
	}
	start, _ := strconv.Atoi(rc.params["start"])
	limit := 50
	if v, ok := rc.params["limit"]; ok {
		limit, _ = strconv.Atoi(v)
	}
	if len(t.Log) == 0 {
		return withTotal{data: []map[string]any{{"n": 1, "t": "no content"}}, total: 1}, nil
	}
	out := []map[string]any{}
	for i := start; i < len(t.Log) && (limit == 0 || len(out) < limit); i++ {
		out = append(out, map[string]any{"n": i + 1, "t": t.Log[i]})
	}
	return withTotal{data: out, total: len(t.Log)}, nil
}

// handleTaskList is GET /nodes/{node}/tasks: newest first; the caller's own
// tasks, or all of the node's with Sys.Audit on it.
func handleTaskList(rc *reqCtx) (any, *apiError) {
	node := rc.params["node"]
	all := hasPriv(rc.token, "/nodes/"+node, "Sys.Audit")
	source := cmp.Or(rc.params["source"], "archive")
	var sel []*task
	for _, t := range rc.s.tasks {
		if t.Node != node || (!all && t.User != rc.tokenID) {
			continue
		}
		running := t.Status == "running"
		if (source == "archive" && running) || (source == "active" && !running) {
			continue
		}
		if v := rc.params["typefilter"]; v != "" && t.Type != v {
			continue
		}
		if v := rc.params["vmid"]; v != "" && t.ID != v {
			continue
		}
		if v := rc.params["userfilter"]; v != "" && !strings.Contains(t.User, v) {
			continue
		}
		if rc.flag("errors") && (running || !isTaskError(t.ExitStatus)) {
			continue
		}
		if v, err := strconv.ParseInt(rc.params["since"], 10, 64); err == nil && t.StartTime < v {
			continue
		}
		if v, err := strconv.ParseInt(rc.params["until"], 10, 64); err == nil && t.StartTime > v {
			continue
		}
		sel = append(sel, t)
	}
	slices.SortStableFunc(sel, func(a, b *task) int {
		return cmp.Or(cmp.Compare(b.StartTime, a.StartTime), cmp.Compare(b.pid, a.pid))
	})
	start, _ := strconv.Atoi(rc.params["start"])
	limit := 50
	if v, ok := rc.params["limit"]; ok {
		limit, _ = strconv.Atoi(v)
	}
	out := []map[string]any{}
	for i := start; i < len(sel) && (limit == 0 || len(out) < limit); i++ {
		t := sel[i]
		e := taskEntry(t)
		if t.Status == "running" {
			e["status"] = "RUNNING"
		} else {
			e["status"] = t.ExitStatus
			e["endtime"] = t.EndTime
		}
		out = append(out, e)
	}
	return withTotal{data: out, total: len(sel)}, nil
}
