package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// The pipeline's audit records: one JSON line per attempt, written before
// the request is sent (see [AuditRecord]).

// RecordRefusal writes a "refused" audit record for a mutation request that
// an adapter refused before it reached this package (for example, arguments
// that failed an MCP input schema). op names the operation
// ([OpGuestPower], [OpSnapshotGuest]); reason should not quote the refused input. It does
// nothing when no audit sink is configured.
func (c *Client) RecordRefusal(ctx context.Context, op Operation, reason error) {
	c.auditRefusal(ctx, &mutation{decl: declared(op)}, reason)
}

func (c *Client) auditRefusal(ctx context.Context, m *mutation, reason error) {
	if c.audit == nil {
		return
	}
	if err := c.record(ctx, m, AuditRefused, reason.Error(), ""); err != nil {
		c.log.ErrorContext(ctx, "audit record of a refusal could not be written", slog.String("error", err.Error()))
	}
}

func (c *Client) record(ctx context.Context, m *mutation, ev AuditEvent, reason, id string) error {
	if c.audit == nil {
		return errors.New("no audit sink configured")
	}
	rec := AuditRecord{
		Time:     time.Now().UTC(),
		Event:    ev,
		Op:       m.name(),
		Cluster:  c.Cluster().String(),
		Action:   m.action,
		Node:     m.target.Node,
		Type:     string(m.target.Type),
		VMID:     m.target.VMID,
		Snapshot: m.target.Snapshot,
		Params:   paramStrings(m.params),
		Reason:   reason,
		Path:     m.apiPath,
		UPID:     id,
	}
	if m.apiPath != "" {
		rec.Method = m.requestMethod
	}
	if ev == AuditApproved || ev == AuditSubmitted {
		rec.Approver = m.state.approvedBy
		rec.Grant, rec.Operator = m.state.approvalNote.Grant, m.state.approvalNote.Operator
	}
	return c.audit.Record(ctx, rec)
}

// paramStrings renders approval parameters as "name=value".
func paramStrings(ps []ApprovalParam) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name+"="+p.Value)
	}
	return out
}
