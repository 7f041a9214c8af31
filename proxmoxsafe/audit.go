package proxmoxsafe

import (
	"context"
	"time"
)

// AuditEvent is the kind of an audit record.
type AuditEvent string

// Audit events, in the order one mutation can produce them.
const (
	// AuditRefused: the mutation was refused before anything was sent.
	AuditRefused AuditEvent = "refused"
	// AuditApproved: every check passed; the request is about to be sent.
	AuditApproved AuditEvent = "approved"
	// AuditSubmitted: Proxmox accepted the request and returned a UPID.
	AuditSubmitted AuditEvent = "submitted"
	// AuditFailed: the request was sent but Proxmox refused it, or (with
	// the UPID set) its task stopped with an error, as [Client.Verify] found.
	AuditFailed AuditEvent = "failed"
	// AuditCompleted: [Client.Verify] saw the task end OK (or with
	// warnings, named in Reason) and fresh state showing its result.
	AuditCompleted AuditEvent = "completed"
)

// Events about the log itself.
const (
	// AuditAnchor: the first record of every log, written when it is
	// created; it carries Format and KeyID.
	AuditAnchor AuditEvent = "anchor"
	// AuditRepaired: the log's repair
	// ([github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog.Repair]) changed
	// it; Reason says what.
	AuditRepaired AuditEvent = "repaired"
)

// AuditRecord is one line of the audit log. It never holds secrets: no token,
// no approval text beyond whether it matched, no free text from guests.
type AuditRecord struct {
	Time  time.Time  `json:"time"`
	Event AuditEvent `json:"event"`
	// Op is the library operation, e.g. [OpGuestPower] or [OpSnapshotGuest].
	Op Operation `json:"op"`
	// Cluster names the cluster the mutation was for and whom the server
	// acts as ([Cluster.String]: "https://pve:8006 as root@pam!mcp"): set
	// on every record the Client writes, so that servers for several
	// clusters can share one log. Records of earlier versions lack it.
	Cluster string `json:"cluster,omitempty"`
	Action  string `json:"action,omitempty"`
	Node    string `json:"node,omitempty"`
	Type    string `json:"type,omitempty"`
	VMID    int    `json:"vmid,omitempty"`
	// Snapshot is the snapshot name for snapshot operations.
	Snapshot string `json:"snapname,omitempty"`
	// Method and Path are set for gateway writes ([OpAPIRequest]): the
	// HTTP method and the API path relative to /api2/json, unescaped.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Params are the approved parameters that change what the mutation does
	// beyond Action and the target, as "name=value" (e.g. "vmstate=1").
	Params []string `json:"params,omitempty"`
	// Reason says why a mutation was refused or failed.
	Reason string `json:"reason,omitempty"`
	// UPID is set on submitted records.
	UPID string `json:"upid,omitempty"`
	// Approver names the approver that approved, e.g. "phrase".
	Approver string `json:"approver,omitempty"`
	// Grant and Operator are set when an out-of-band grant approved the
	// mutation: the grant's code and the operator who approved it.
	Grant    string `json:"grant,omitempty"`
	Operator string `json:"operator,omitempty"`

	// Format and KeyID are set only on the anchor record: the line format
	// ([github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog.Format]) and
	// an id of the key the chain is keyed with (empty for an unkeyed
	// chain), which names the key without revealing it.
	Format string `json:"format,omitempty"`
	KeyID  string `json:"key_id,omitempty"`

	// Seq and Prev are filled in by the sink: Seq counts records from 1 (the
	// anchor), and Prev is the link of the previous line (without its
	// newline) — its hex HMAC-SHA256 with the log's key, or its hex SHA-256
	// for an unkeyed log — or empty for the anchor. See
	// [github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog.Verify].
	Seq  int64  `json:"seq"`
	Prev string `json:"prev"`
}

// An AuditSink stores audit records. Record must not return until the record
// is durable enough that the caller may act on it; if it returns an error the
// mutation is not performed (fail closed). Implementations must be safe for
// concurrent use.
type AuditSink interface {
	Record(ctx context.Context, rec AuditRecord) error
}
