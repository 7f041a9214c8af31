package proxmoxsafe

import "context"

// discardAudit is the sink of the internal tests that need one to enable
// a mutation class and look at something else. They cannot use the file
// log: package auditlog imports this package, so importing it here would
// be a cycle.
type discardAudit struct{}

func (discardAudit) Record(context.Context, AuditRecord) error { return nil }
