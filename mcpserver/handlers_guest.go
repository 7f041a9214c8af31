package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func (a *adapter) guestStatus(ctx context.Context, in proxmoxsafe.GuestStatusInput) (string, *proxmoxsafe.GuestStatusResult, error) {
	t := in.Target()
	res, err := a.client.GuestStatus(ctx, in)
	if err != nil {
		return "", nil, err
	}
	state := clean(res.Status, 16)
	if res.Paused {
		state += " (paused)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", guestLabel(t, res.Name), state)
	if res.Status == "running" {
		fmt.Fprintf(&b, ", up %s, CPU %.0f%% of %d, memory %s of %s", duration(res.Uptime), res.CPU*100, res.CPUs, gib(res.Mem), gib(res.MaxMem))
	}
	if res.Lock != "" {
		fmt.Fprintf(&b, ", locked (%s)", clean(res.Lock, 32))
	}
	if res.Template {
		b.WriteString(", template")
	}
	if res.HAManaged {
		fmt.Fprintf(&b, ", HA-managed (%s)", orNone(clean(res.HAState, 32)))
	}
	return b.String(), res, nil
}

func (a *adapter) guestConfig(ctx context.Context, in proxmoxsafe.GuestConfigInput) (string, *proxmoxsafe.GuestConfigResult, error) {
	t := in.Target()
	res, err := a.client.GuestConfig(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := fmt.Sprintf("Config of %s: %d keys", guestLabel(t, res.Config["name"]+res.Config["hostname"]), len(res.Config))
	if len(res.Redacted) > 0 {
		text += "; redacted: " + strings.Join(res.Redacted, ", ")
	}
	if len(res.Truncated) > 0 {
		text += "; truncated: " + strings.Join(res.Truncated, ", ")
	}
	if res.OmittedKeys > 0 {
		text += fmt.Sprintf("; %d keys omitted", res.OmittedKeys)
	}
	return text, res, nil
}

func (a *adapter) snapshotList(ctx context.Context, in proxmoxsafe.ListSnapshotsInput) (string, *proxmoxsafe.ListSnapshotsResult, error) {
	t := in.Target()
	res, err := a.client.ListSnapshots(ctx, in)
	if err != nil {
		return "", nil, err
	}
	label := guestLabel(t, "")
	var text string
	switch {
	case res.Total == 0:
		text = label + " has no snapshots"
	case len(res.Snapshots) < res.Total:
		text = fmt.Sprintf("%s has %d snapshots (first %d listed); current state is based on %s", label, res.Total, len(res.Snapshots), clean(res.Current, 64))
	default:
		text = fmt.Sprintf("%s has %d snapshots; current state is based on %s", label, res.Total, orNone(clean(res.Current, 64)))
	}
	return text, res, nil
}

func (a *adapter) taskStatus(ctx context.Context, in proxmoxsafe.TaskLogInput) (string, *proxmoxsafe.TaskReportResult, error) {
	res, err := a.client.TaskReport(ctx, in)
	if err != nil {
		return "", nil, err
	}
	what := fmt.Sprintf("Task %s", clean(res.Task.Type, 64))
	if res.Task.ID != "" {
		what += " " + clean(res.Task.ID, 64)
	}
	what += " on " + res.Task.Node
	var text string
	switch {
	case res.Running():
		text = what + " is still running"
	case res.Failed:
		text = what + " failed: " + clean(res.ExitStatus, 512)
	default:
		text = what + " finished: " + clean(res.ExitStatus, 64)
	}
	return text + fmt.Sprintf(" (last %d of %d log lines attached)", len(res.Log.Lines), res.Log.Total), res, nil
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
