package grant

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Name implements [proxmoxsafe.Approver]: "grant".
func (*Store) Name() string { return string(proxmoxsafe.LevelGrant) }

// Approve implements [proxmoxsafe.Approver]: a call approves when an
// approved, unexpired grant bound to exactly this request exists (the
// same [proxmoxsafe.ApprovalRequest.Binding]: what the operator was shown,
// rebuilt by the pipeline from this call's fresh reads, on this cluster);
// that grant is then used. Otherwise it refuses with a [*RequiredError]
// naming a pending grant (an existing one for this request, or a new one)
// and the plan (req.Plan: the pipeline adds a plan only to its own refusal
// types). When a grant was approved for the same call but what it showed
// is no longer what approving does (a disk attached, another size,
// another state, another cluster), the refusal says what differs and asks
// for the new grant: the old one stays unused.
func (s *Store) Approve(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
	bound := binding(req)
	var used *Grant
	var pending *Grant
	var stale *Grant // approved for the same call, showing something else
	err := s.locked(func() error {
		now := s.now()
		grants, err := s.readAll()
		if err != nil {
			return err
		}
		for i := range grants {
			g := &grants[i]
			if now.After(g.Expires) {
				continue
			}
			if g.Binding != bound || !g.Shows() {
				if g.Status == Approved && sameCall(*g, req) && (stale == nil || g.Decided.After(stale.Decided)) {
					stale = g
				}
				continue
			}
			switch g.Status {
			case Approved:
				g.Status, g.Used = Used, now
				if err := s.write(*g); err != nil {
					return err
				}
				used = g
				return nil
			case Pending:
				pending = g
			}
		}
		if pending != nil {
			return nil
		}
		g := Grant{
			Cluster: req.Cluster, Action: req.Action, Target: req.Target, Params: paramStrings(req.Params), Arguments: req.Arguments,
			Effect: req.Effect, Risk: req.Risk, Guest: req.State, State: req.State.Summary(), Plan: req.Plan, Binding: bound,
			Created: now.UTC(), Expires: now.Add(s.ttl).UTC(), Status: Pending,
		}
		for range 5 {
			if g.Code, err = newCode(); err != nil {
				return err
			}
			if _, err := os.Stat(s.path(g.Code)); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		if err := s.write(g); err != nil {
			return err
		}
		pending = &g
		return nil
	})
	if err != nil {
		return &proxmoxsafe.RefusalError{Kind: proxmoxsafe.ErrApprovalRequired,
			Reason: fmt.Sprintf("the grant store could not be used (%v)", err)}
	}
	if used != nil {
		proxmoxsafe.NoteApproval(ctx, proxmoxsafe.ApprovalNote{Grant: used.Code, Operator: used.Operator})
		return nil
	}
	out := &RequiredError{Grant: *pending, Plan: req.Plan, Command: s.cmd}
	if stale != nil {
		out.Stale, out.Changed = stale.Code, proxmoxsafe.ShownDifference(stale.Request(), req)
	}
	return out
}

// sameCall reports whether g was asked for by the call req repeats: the
// same action, target and arguments (which hold the parameters), whatever
// the cluster, the state or the effect.
func sameCall(g Grant, req proxmoxsafe.ApprovalRequest) bool {
	return g.Action == req.Action && g.Target == req.Target && g.Arguments == req.Arguments
}

// RequiredError is the refusal of the grant level: the operator must
// approve Grant.Code out of band before the same call is repeated. It
// matches [proxmoxsafe.ErrApprovalRequired].
type RequiredError struct {
	// Grant is the pending grant, with the plan the operator will see.
	Grant Grant
	// Plan is the same plan a call with plan: true returns for this
	// input and state; nil for operations without one.
	Plan *proxmoxsafe.Plan
	// Command is what the operator runs with the code on the server host
	// ([Options.Command]); empty means [DefaultCommand].
	Command string
	// Stale, when set, is the code of a grant approved for this same call
	// that no longer applies, and Changed says what differs between what
	// it showed and what approving does now
	// ([proxmoxsafe.ShownDifference]).
	Stale, Changed string
}

// Error says what the operator must do; it holds the code and the plan,
// never a secret.
func (e *RequiredError) Error() string {
	g := e.Grant
	command := e.Command
	if command == "" {
		command = DefaultCommand
	}
	stale := ""
	if e.Stale != "" {
		stale = fmt.Sprintf(" (grant %s was approved for this call, but not for what it does now, so it was not used: %s)", e.Stale, e.Changed)
	}
	cluster := ""
	if c := g.Cluster.String(); c != "" {
		cluster = "; cluster: " + c
	}
	return fmt.Sprintf("approval required: an operator must approve grant %s out of band (on the server host: %s %s) "+
		"before %s; then repeat this call unchanged%s. Plan: %s on %s%s; approving will %s; current state: %s; no action was taken",
		g.Code, command, g.Code, g.Expires.UTC().Format(TimeFormat), stale, g.Action, g.TargetText(), cluster, g.Effect, g.State)
}

// Is makes the error match [proxmoxsafe.ErrApprovalRequired].
func (e *RequiredError) Is(target error) bool { return target == proxmoxsafe.ErrApprovalRequired }
