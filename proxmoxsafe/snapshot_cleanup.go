package proxmoxsafe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// OpCleanupSnapshots is the name of [Client.CleanupSnapshots].
const OpCleanupSnapshots Operation = "CleanupSnapshots"

// cleanupSnapshotsOp declares [Client.CleanupSnapshots].
var cleanupSnapshotsOp = operation{info: OperationInfo{
	Name:         OpCleanupSnapshots,
	Class:        ClassResponder,
	Method:       "DELETE",
	Route:        "/nodes/{node}/{type}/{vmid}/snapshot/{snapname}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "snapshot-cleanup", Risk: riskDelete},
		// Each deletion's records name the action it sends.
		{Name: "delsnapshot", Risk: riskDelete},
	},
	ApprovalFormat: "APPROVE snapshot-cleanup <node>/<type>/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the plan reads the guest's state, snapshots and running tasks"},
		{Path: pathVMs, Name: "VM.Snapshot"},
	},
}}

// CleanupSnapshotsInput names the guest whose snapshots
// [Client.CleanupSnapshots] prunes.
type CleanupSnapshotsInput struct {
	GuestRef
	// Apply executes the plan. Without it the call is a dry run: it
	// returns the exact plan and sends nothing that changes anything.
	Apply bool `json:"apply,omitempty"`
	// Approval is the approval text when the operator requires one: the
	// phrase [ApprovalPhrase] for "snapshot-cleanup" and the guest. Only
	// Apply needs it.
	Approval string `json:"approval,omitempty" validate:"max=256" jsonschema:"Only when the operator requires approval for these tools, and only with apply: exactly \"APPROVE snapshot-cleanup <node>/<type>/<vmid>\". By default none is needed: omit it."`
}

// Target returns the guest the input names.
func (in CleanupSnapshotsInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// CleanupStepStatus says what became of one planned deletion.
type CleanupStepStatus string

// The states of a [CleanupStep].
const (
	// StepPlanned: a dry run; nothing was sent.
	StepPlanned CleanupStepStatus = "planned"
	// StepDeleted: the deletion task ended OK.
	StepDeleted CleanupStepStatus = "deleted"
	// StepFailed: Proxmox refused the deletion or its task failed; the
	// run stopped here.
	StepFailed CleanupStepStatus = "failed"
	// StepUnknown: the deletion task had not ended when the wait did; the
	// run stopped here. Check the task (UPID) later.
	StepUnknown CleanupStepStatus = "unknown"
	// StepSkipped: between the plan and its turn the snapshot vanished or
	// gained a keep marker; it was not deleted.
	StepSkipped CleanupStepStatus = "skipped"
	// StepNotAttempted: an earlier step stopped the run.
	StepNotAttempted CleanupStepStatus = "not_attempted"
)

// CleanupStep is one planned deletion and what became of it.
type CleanupStep struct {
	// Name is the snapshot; Rule and Reason say why the plan deletes it.
	Name   string            `json:"name"`
	Rule   retention.Rule    `json:"rule"`
	Reason string            `json:"reason"`
	Status CleanupStepStatus `json:"status"`
	// UPID is the deletion task, once submitted.
	UPID string `json:"upid,omitempty"`
	// Detail says why a step failed, was skipped or is unknown.
	Detail string `json:"detail,omitempty"`
}

// CleanupResult is what [Client.CleanupSnapshots] planned and did.
type CleanupResult struct {
	Target Target `json:"target"`
	// Applied is false for a dry run.
	Applied bool `json:"applied"`
	// Plan is the retention plan computed from the fresh snapshot list.
	Plan retention.Result `json:"plan"`
	// Steps follow Plan.Delete, in order.
	Steps []CleanupStep `json:"steps"`
	// Deleted counts the steps with status "deleted".
	Deleted int `json:"deleted"`
	// Message sums the result up in one sentence.
	Message string `json:"message"`
}

// cleanupPollInterval paces the task polls between deletions.
const cleanupPollInterval = 250 * time.Millisecond

// CleanupSnapshots applies the operator's retention policy
// ([Policy.Retention], see [retention.Plan]) to one guest's snapshots (class
// "responder").
//
// Both a dry run and an applied run go through the checks of the pipeline:
// validation, policy, protection, fresh state (no template, no lock), no
// running task; a refusal is audited. A dry run then returns the exact
// plan and sends no mutating request. With Apply, the approval follows
// (once for the run), then the deletions run one at a time: before each
// one the snapshot list and the guest's tasks are read again (a snapshot
// that vanished or gained a keep marker is skipped; a task started by
// someone else stops the run), an audit record is written, one DELETE is
// sent and its task is waited for (up to [Config.MaxWait]). A failed
// deletion stops the run: the result says what was deleted, what failed
// and what was not attempted, and the error is a *[TaskError] (or the
// refusal or upstream error that stopped it). The result is returned
// whenever anything was sent.
func (c *Client) CleanupSnapshots(ctx context.Context, in CleanupSnapshotsInput) (*CleanupResult, error) {
	const op = OpCleanupSnapshots
	start := time.Now()
	t := in.Target()
	var plan retention.Result
	view := newPrefetch(func(ctx context.Context) ([]retention.Snapshot, error) { return c.retentionView(ctx, t) })
	m := &mutation{decl: &cleanupSnapshotsOp, mutationCall: mutationCall{
		action:   "snapshot-cleanup",
		input:    in,
		target:   t,
		given:    in.Approval,
		prefetch: []prefetcher{view},
		precondition: func(ctx context.Context, s GuestState) error {
			if err := snapshotAdminPrecondition(t, s); err != nil {
				return err
			}
			snaps, err := view.get(ctx)
			if err != nil {
				return err
			}
			plan = retention.Plan(snaps, c.policy.protect.retention, time.Now())
			return nil
		},
		effect: func(s GuestState) string {
			names := make([]string, 0, len(plan.Delete))
			for _, d := range plan.Delete {
				names = append(names, d.Name)
			}
			if len(names) == 0 {
				return "delete no snapshot of " + describe(t, s) + " (the retention policy keeps them all)"
			}
			return fmt.Sprintf("delete %d snapshot(s) of %s by the retention policy, one at a time: %s", len(names), describe(t, s), strings.Join(names, ", "))
		},
	}}
	res, err := c.cleanup(ctx, m, in.Apply, &plan)
	if m.state.release != nil {
		m.state.release()
	}
	var attrs []slog.Attr
	attrs = append(attrs, guestAttrs(t)...)
	attrs = append(attrs, slog.Bool("apply", in.Apply))
	if res != nil {
		attrs = append(attrs, slog.Int("deleted", res.Deleted))
	}
	return res, c.logged(ctx, op, start, err, attrs...)
}

func (c *Client) cleanup(ctx context.Context, m *mutation, apply bool, plan *retention.Result) (*CleanupResult, error) {
	state, err := c.admit(ctx, m)
	if err != nil {
		return nil, err
	}
	if !apply {
		res := newCleanupResult(m.target, false, *plan)
		res.Message = fmt.Sprintf("Dry run: the retention policy would delete %d of %d snapshots of %s and keep %d; nothing was changed (apply to execute).",
			len(plan.Delete), len(plan.Delete)+len(plan.Keep), describe(m.target, state), len(plan.Keep))
		return res, nil
	}
	// A slow approver makes approveFresh re-run the precondition, which
	// plans again: the result follows the plan as it is now.
	state, err = c.approveFresh(ctx, m, state)
	if err != nil {
		return nil, err
	}
	res := newCleanupResult(m.target, true, *plan)
	for i := range res.Steps {
		if err := c.cleanupStep(ctx, m, state, &res.Steps[i], i > 0); err != nil {
			for j := i + 1; j < len(res.Steps); j++ {
				res.Steps[j].Status = StepNotAttempted
			}
			res.count()
			res.Message = fmt.Sprintf("Stopped after %d deletion(s): %s %s: %s; %d not attempted.",
				res.Deleted, res.Steps[i].Name, res.Steps[i].Status, res.Steps[i].Detail, len(res.Steps)-i-1)
			return res, err
		}
	}
	res.count()
	res.Message = fmt.Sprintf("Deleted %d snapshot(s) of %s by the retention policy; %d kept.", res.Deleted, describe(m.target, state), len(plan.Keep))
	return res, nil
}

func newCleanupResult(t Target, apply bool, plan retention.Result) *CleanupResult {
	res := &CleanupResult{Target: t, Applied: apply, Plan: plan, Steps: make([]CleanupStep, len(plan.Delete))}
	for i, d := range plan.Delete {
		res.Steps[i] = CleanupStep{Name: d.Name, Rule: d.Rule, Reason: d.Reason, Status: StepPlanned}
	}
	return res
}

func (r *CleanupResult) count() {
	r.Deleted = 0
	for _, s := range r.Steps {
		if s.Status == StepDeleted {
			r.Deleted++
		}
	}
}

// cleanupStep deletes one planned snapshot and waits for its task. recheck
// re-reads the snapshot list and the guest's tasks first (the plan was
// read fresh for the first step). A skipped step returns nil; anything
// that stops the run returns its error.
func (c *Client) cleanupStep(ctx context.Context, parent *mutation, state GuestState, step *CleanupStep, recheck bool) error {
	t := parent.target
	t.Snapshot = step.Name
	sub := c.deleteSnapshotMutation(parent.decl, nil, t, "")
	sub.state.approvedBy = parent.state.approvedBy // the run's approval covers each deletion
	if recheck {
		snaps, err := c.retentionView(ctx, parent.target)
		if err != nil {
			step.Status, step.Detail = StepFailed, "the snapshot list could not be read again: "+err.Error()
			return &PreconditionReadError{Err: err}
		}
		var found *retention.Snapshot
		for i := range snaps {
			if snaps[i].Name == step.Name {
				found = &snaps[i]
			}
		}
		switch {
		case found == nil:
			step.Status, step.Detail = StepSkipped, "the snapshot no longer exists"
			return nil
		case retention.HasKeepMarker(found.Name, found.Description):
			step.Status, step.Detail = StepSkipped, "the snapshot gained a keep marker since the plan was made"
			return nil
		}
		if err := c.checkNoActiveTask(ctx, parent.target, state); err != nil {
			step.Status, step.Detail = StepFailed, err.Error()
			c.auditRefusal(ctx, sub, err)
			return err
		}
	}
	r, err := c.submit(ctx, sub, state)
	if err != nil {
		if r != nil { // sent before the cancellation: the task runs
			step.UPID = r.UPID
		}
		step.Status, step.Detail = StepFailed, err.Error()
		return err
	}
	step.UPID = r.UPID
	wctx, cancel := context.WithTimeout(ctx, c.maxWait)
	defer cancel()
	st, err := c.poll(wctx, r.UPID, r.Task, WaitOptions{Interval: cleanupPollInterval, MaxInterval: 2 * time.Second}, time.Now(), c.maxWait)
	var te *TaskError
	switch {
	case err == nil:
		step.Status = StepDeleted
		if aerr := c.record(ctx, sub, AuditCompleted, "", r.UPID); aerr != nil {
			c.log.ErrorContext(ctx, "audit record of a completed deletion could not be written", slog.String("upid", r.UPID), slog.String("error", aerr.Error()))
		}
		return nil
	case errors.As(err, &te):
		step.Status, step.Detail = StepFailed, "the deletion task failed: "+st.ExitStatus
		if aerr := c.record(ctx, sub, AuditFailed, line(st.ExitStatus, maxErrorText), r.UPID); aerr != nil {
			c.log.ErrorContext(ctx, "audit record of a failed deletion could not be written", slog.String("upid", r.UPID), slog.String("error", aerr.Error()))
		}
		return err
	}
	step.Status, step.Detail = StepUnknown, "the deletion task had not ended when the wait did ("+err.Error()+"); check the task later"
	return err
}

// retentionView reads the guest's snapshots as [retention.Plan] needs
// them: full descriptions (a marker past a display cap must still count),
// without the "current" pseudo-entry.
func (c *Client) retentionView(ctx context.Context, t Target) ([]retention.Snapshot, error) {
	var raw []rawSnapshotEntry
	if err := c.get(ctx, guestPath(t, "snapshot"), nil, &raw); err != nil {
		return nil, err
	}
	out := make([]retention.Snapshot, 0, len(raw))
	for _, r := range raw {
		name := string(r.Name)
		if name == "current" || sanitize.Line(name) != name || !snapnameRe.MatchString(name) {
			// Not a snapshot name Proxmox can hold: never a deletion target.
			continue
		}
		s := retention.Snapshot{Name: name, Description: string(r.Description)}
		if r.SnapTime > 0 {
			s.Time = time.Unix(int64(r.SnapTime), 0).UTC()
		}
		out = append(out, s)
	}
	return out, nil
}

// snapshotVerdict is what ListSnapshots adds to each snapshot.
type snapshotVerdict struct {
	keep, autosnap bool
	cleanup        SnapshotCleanup
}

// cleanupVerdicts plans the retention policy over a snapshot list already
// read (full descriptions) and says, per snapshot name, what a cleanup now
// would do. A guest the operator protects gets no deletion at all.
func (c *Client) cleanupVerdicts(ctx context.Context, t Target, raw []rawSnapshotEntry, now time.Time) (map[string]snapshotVerdict, error) {
	protected := ""
	if c.policy.protected[t.VMID] {
		protected = fmt.Sprintf("guest %d is protected by the operator", t.VMID)
	} else {
		why, err := c.protection(ctx, t)
		if err != nil {
			return nil, err
		}
		protected = why
	}
	snaps := make([]retention.Snapshot, 0, len(raw))
	for _, r := range raw {
		if name := string(r.Name); name != "current" {
			s := retention.Snapshot{Name: line(name, 64), Description: string(r.Description)}
			if r.SnapTime > 0 {
				s.Time = time.Unix(int64(r.SnapTime), 0).UTC()
			}
			snaps = append(snaps, s)
		}
	}
	plan := retention.Plan(snaps, c.policy.protect.retention, now)
	out := make(map[string]snapshotVerdict, len(snaps))
	for _, list := range [][]retention.Decision{plan.Delete, plan.Keep} {
		for _, d := range list {
			v := snapshotVerdict{keep: d.Keep, autosnap: d.Autosnap, cleanup: SnapshotCleanup{WouldDelete: d.Delete, Rule: d.Rule, Reason: d.Reason}}
			if protected != "" && d.Delete {
				v.cleanup.WouldDelete = false
				v.cleanup.Reason = "the retention policy would delete it (" + d.Reason + "), but " + protected
			}
			out[d.Name] = v
		}
	}
	return out, nil
}
