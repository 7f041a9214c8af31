package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// taskListTool declares the task_list tool.
func taskListTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolTaskList,
		Title:       "Task list",
		Description: "A node's tasks, newest first, running ones included; paged by start (pass next_start back).",
	}, ops(proxmoxsafe.OpListTasks), (*adapter).taskList, func() map[string]string {
		return map[string]string{
			"tasks":      "This page of tasks, newest first.",
			"total":      "Number of tasks that matched, on all pages.",
			"next_start": "Pass as start to get the next page; absent on the last page.",
		}
	})
}

func (a *adapter) taskList(ctx context.Context, in proxmoxsafe.ListTasksInput) (string, *proxmoxsafe.ListTasksResult, error) {
	res, err := a.client.ListTasks(ctx, in)
	if err != nil {
		return "", nil, err
	}
	failed, running := 0, 0
	for _, t := range res.Tasks {
		if t.Failed {
			failed++
		}
		if t.Status == "running" {
			running++
		}
	}
	var text string
	switch {
	case res.Total == 0:
		text = "No tasks matched on " + res.Node
	case len(res.Tasks) == 0:
		text = fmt.Sprintf("No more tasks: all %d were listed on earlier pages", res.Total)
	default:
		text = fmt.Sprintf("Listed %d of %d tasks on %s (%d running, %d failed on this page)", len(res.Tasks), res.Total, res.Node, running, failed)
	}
	if res.NextStart > 0 {
		text += fmt.Sprintf("; more with start %d", res.NextStart)
	}
	return text, res, nil
}
