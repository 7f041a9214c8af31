package proxmoxsafe

import "slices"

// Plan is what a mutation would do, returned instead of doing it when
// the input asks for a plan (its Plan field): every step up to the
// approval ran (validation, policy, fresh state, preconditions, the
// active-task check) and no mutating request was sent. A plan is not
// audited (nothing was attempted); a refusal on the way is, as always.
type Plan struct {
	// Class is the mutation class the operation belongs to.
	Class Class `json:"class"`
	// Method and Path are the one request the mutation would send
	// (Path relative to /api2/json); Params are its parameters.
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Params map[string]string `json:"params,omitempty"`
	// Effect says in one sentence what approving will do, from the fresh
	// state (for a rollback: what is lost and whether the snapshot has RAM).
	Effect string `json:"effect"`
	// Approval is the exact phrase that approves it under the phrase
	// level, empty when the class's levels do not include that level (a
	// phrase would not approve it, so none is shown); ApprovalLevels are
	// the levels the operator allows for the class, in order (level none
	// needs no approval).
	Approval       string          `json:"approval,omitempty"`
	ApprovalLevels []ApprovalLevel `json:"approval_levels"`
	// Precheck is Proxmox's own precheck answer, for a migration
	// ([Client.MigrateGuest]); nil for other mutations.
	Precheck *MigratePrecheck `json:"precheck,omitempty"`
}

// plan builds the plan of a mutation that passed admit.
func (c *Client) plan(m *mutation, s GuestState) *Receipt {
	p := &Plan{
		Class:          m.class(),
		Method:         m.method(),
		Path:           m.path,
		Effect:         m.effect(s),
		ApprovalLevels: c.policy.approvalsFor(m.class()),
	}
	if slices.Contains(p.ApprovalLevels, LevelPhrase) {
		p.Approval = c.onCluster(ApprovalPhrase(m.action, m.target, m.params...))
	}
	form := m.form
	if m.planForm != nil {
		form = m.planForm
	}
	for k := range form {
		if p.Params == nil {
			p.Params = map[string]string{}
		}
		p.Params[k] = form.Get(k)
	}
	r := &Receipt{Action: m.action, Target: m.target, Before: s, HAManaged: s.HAManaged, NewGuest: m.newGuest, Plan: p, op: m.name()}
	if m.changes != nil {
		r.Changes = m.changes()
	}
	return r
}
