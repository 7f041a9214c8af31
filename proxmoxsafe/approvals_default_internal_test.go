package proxmoxsafe

import (
	"context"
	"strings"
	"testing"
)

// TestDefaultApprovalsNeedApprovers: a class whose default levels are
// elicit,grant (humanOnlyClasses) cannot be enabled without approvers of
// those names: New says so, instead of the first mutation finding no
// approver. Not parallel: it changes humanOnlyClasses while no parallel
// test runs (they are paused until the sequential tests end).
func TestDefaultApprovalsNeedApprovers(t *testing.T) {
	const cl = ClassSnapshotAdmin
	was := humanOnlyClasses[cl]
	humanOnlyClasses[cl] = true
	defer func() { humanOnlyClasses[cl] = was }()

	if got := (Policy{}).ApprovalLevels(cl); levelList(got) != "elicit,grant" {
		t.Fatalf("ApprovalLevels = %v", got)
	}
	cfg := Config{
		URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
		Policy: Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{cl}},
		Audit:  discardAudit{},
	}
	_, err := New(cfg)
	if err == nil || !strings.Contains(err.Error(), `class "snapshot-admin" defaults to the approval levels elicit,grant`) || !strings.Contains(err.Error(), `"elicit"`) {
		t.Fatalf("New without approvers: %v", err)
	}
	// Naming the class's levels explicitly is the operator's choice.
	cfg.Policy.Approvals = map[Class][]ApprovalLevel{cl: {LevelPhrase}}
	if _, err := New(cfg); err != nil {
		t.Fatalf("New with an explicit level: %v", err)
	}
	// With both approvers present the default is served.
	cfg.Policy.Approvals = nil
	cfg.Approvers = []Approver{namedApprover("grant"), namedApprover("elicit")}
	if _, err := New(cfg); err != nil {
		t.Fatalf("New with elicit and grant approvers: %v", err)
	}
}

type namedApprover string

func (n namedApprover) Name() string                                 { return string(n) }
func (namedApprover) Approve(context.Context, ApprovalRequest) error { return ErrApproverUnavailable }
