package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Tool names of the responder class: narrow, guarded tools for an
// automated responder with no human in the loop (issue 10).
const (
	ToolVMStart         = "vm_start"
	ToolVMReboot        = "vm_reboot"
	ToolVMReset         = "vm_reset"
	ToolSnapshotCleanup = "snapshot_cleanup"
)

// The responder tools' arguments: the library inputs plus waitArgs.
type (
	guardedPowerArgs struct {
		proxmoxsafe.GuardedPowerInput
		waitArgs
	}
	resetGuestArgs struct {
		proxmoxsafe.ResetGuestInput
		waitArgs
	}
)

func (a guardedPowerArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.GuardedPowerInput {
	a.Wait = w
	return a.GuardedPowerInput
}

func (a resetGuestArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.ResetGuestInput {
	a.Wait = w
	return a.ResetGuestInput
}

// responderApproval is the part of each description about approval: by
// default these tools need none (the binary's responder profile), but the
// operator may require one.
const responderApproval = "No approval phrase is needed unless the operator requires one for this class (the refusal then names it). Every call, refused or not, is audited."

// responderTools are the tools of the responder class.
func responderTools() []toolDef {
	return []toolDef{
		mutationTool[guardedPowerArgs](ToolInfo{
			Name:  ToolVMStart,
			Title: "Start a stopped guest",
			Description: "Start one stopped VM or container. " +
				"Refused (nothing is done) when the operator protects the guest (by VMID, name, tag or pool), when it is already running or paused, locked, or a template, or when a task runs for it. " +
				responderApproval + " " +
				"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the guest runs.",
			Class:          proxmoxsafe.ClassResponder,
			Annotations:    startAnnotations,
			ApprovalFormat: "none by default; APPROVE start <node>/<type>/<vmid> when required",
		}, ops(proxmoxsafe.OpStartGuest), (*proxmoxsafe.Client).StartGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("start", r)
		}),
		mutationTool[guardedPowerArgs](ToolInfo{
			Name:  ToolVMReboot,
			Title: "Reboot a guest (guarded)",
			Description: "Reboot one running VM or container cleanly (the guest OS shuts down and starts again). " +
				"Refused (nothing is done) when the operator protects the guest, when it has been up for less than the operator's minimum uptime (default 1 hour: no reboot loops), when it is stopped, paused, locked or a template, or when a task runs for it. " +
				responderApproval + " " +
				"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the guest runs again with a fresh uptime.",
			Class:          proxmoxsafe.ClassResponder,
			Annotations:    powerAnnotations,
			ApprovalFormat: "none by default; APPROVE reboot <node>/<type>/<vmid> when required",
		}, ops(proxmoxsafe.OpRebootGuest), (*proxmoxsafe.Client).RebootGuest, func(_ proxmoxsafe.GuardedPowerInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("reboot", r)
		}),
		mutationTool[resetGuestArgs](ToolInfo{
			Name:  ToolVMReset,
			Title: "Hard-reset a hung VM",
			Description: "Last resort for a hung QEMU VM: reset it at once, like pressing its reset button (unsaved data in the guest may be lost). Containers have no reset. " +
				"First pings the VM's guest agent: refused (nothing is done) when the agent answers (the guest is alive: use vm_reboot), when no agent is configured (nobody can tell a hung guest from a busy one) unless the operator allows it, when the guest is protected, up for less than the minimum uptime, stopped, paused, locked or a template, or when a task runs for it. " +
				responderApproval + " " +
				"Returns a receipt with the task UPID; with wait: true it waits (timeout_seconds) until the VM runs again with a fresh uptime.",
			Class:          proxmoxsafe.ClassResponder,
			Annotations:    powerAnnotations,
			ApprovalFormat: "none by default; APPROVE reset <node>/qemu/<vmid> when required",
		}, ops(proxmoxsafe.OpResetGuest), (*proxmoxsafe.Client).ResetGuest, func(_ proxmoxsafe.ResetGuestInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("reset", r)
		}),
		{
			info: ToolInfo{
				Name:  ToolSnapshotCleanup,
				Title: "Snapshot cleanup (retention policy)",
				Description: "Apply the operator's snapshot retention policy to one guest. A dry run unless apply: true. " +
					"The policy, in order: a snapshot with \"keep\" in its name or description is never deleted; every other one older than the maximum age (default 24h) is deleted, oldest first; while more than the maximum count (default 6) remain, the oldest manual snapshots go first and automatic ones (description holds the autosnap marker, default cv4pve-autosnap) only as a last resort. " +
					"The dry run returns the exact plan (which snapshot, which rule, why) and changes nothing. With apply: true the deletions run one at a time, each waiting for its Proxmox task; a failed deletion stops the run and the answer says what was deleted, what failed and what was not attempted. " +
					"Refused (nothing is done) when the operator protects the guest, or it is locked or a template, or a task runs for it. " + responderApproval,
				Class:          proxmoxsafe.ClassResponder,
				Annotations:    cleanupAnnotations,
				ApprovalFormat: "none by default; APPROVE snapshot-cleanup <node>/<type>/<vmid> (apply only) when required",
			},
			ops:                ops(proxmoxsafe.OpCleanupSnapshots),
			schemas:            schemasFor[proxmoxsafe.CleanupSnapshotsInput, *proxmoxsafe.CleanupResult],
			input:              reflect.TypeFor[proxmoxsafe.CleanupSnapshotsInput](),
			register:           typedPartial(mutating((*adapter).snapshotCleanup)),
			outputDescriptions: cleanupDescriptions,
		},
	}
}

var (
	// startAnnotations: starting adds nothing destructive; a second start
	// is refused, not repeated.
	startAnnotations = mcp.ToolAnnotations{
		ReadOnlyHint:    false,
		IdempotentHint:  false,
		DestructiveHint: ptr(false),
		OpenWorldHint:   ptr(false),
	}
	// cleanupAnnotations: apply deletes snapshots.
	cleanupAnnotations = mcp.ToolAnnotations{
		ReadOnlyHint:    false,
		IdempotentHint:  false,
		DestructiveHint: ptr(true),
		OpenWorldHint:   ptr(false),
	}
)

var cleanupDescriptions = map[string]string{
	"target":  "The guest (node, type, vmid).",
	"applied": "False for a dry run: nothing was changed.",
	"plan":    "The retention plan from the fresh snapshot list: delete (in execution order) and keep, each with the rule and the reason, and the effective policy.",
	"steps":   "One per planned deletion, in order: status planned (dry run), deleted, failed, unknown (the task had not ended when the wait did), skipped (vanished or newly keep-marked) or not_attempted (after a failure); upid of its task.",
	"deleted": "Snapshots deleted by this call.",
	"message": "The result in one sentence.",
}

func (a *adapter) snapshotCleanup(ctx context.Context, in proxmoxsafe.CleanupSnapshotsInput) (string, *proxmoxsafe.CleanupResult, error) {
	res, err := a.client.CleanupSnapshots(ctx, in)
	if res == nil {
		return "", nil, err
	}
	var b strings.Builder
	b.WriteString(clean(res.Message, 512))
	for _, s := range res.Steps {
		fmt.Fprintf(&b, "\n- %s: %s (%s)", clean(s.Name, 64), s.Status, s.Rule)
		if s.Detail != "" {
			fmt.Fprintf(&b, ": %s", clean(s.Detail, 256))
		}
	}
	return b.String(), res, err
}

// typedPartial is typed for tools whose library call can fail after it
// changed something: an error that comes with a result is a tool error
// that still carries the result (what was done) as structured content.
// An approval that asks the person at the client (level elicit) becomes
// the elicitation, as in typed and typedMutation.
func typedPartial[In, Out any](h handlerFunc[In, *Out]) func(*mcp.Server, *servedSchemas, *adapter) {
	return func(s *mcp.Server, st *servedSchemas, a *adapter) {
		serveTool(s, st, a, h, func(name, text string, o *Out, err error) (*mcp.CallToolResult, any, error) {
			if res, ok := inputRequired(err); ok && o == nil { // elicit.go
				return res, nil, nil
			}
			switch {
			case err != nil && o != nil:
				res := structuredResult(text, o) // served.go
				res.SetError(err)                // keeps the library error for LoggingMiddleware
				return res, o, nil
			case err != nil:
				return nil, nil, toolError(name, err)
			case o == nil:
				return nil, nil, toolError(name, errors.New("no result"))
			}
			return structuredResult(text, o), o, nil
		})
	}
}
