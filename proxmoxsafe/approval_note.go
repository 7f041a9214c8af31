package proxmoxsafe

import "context"

// ApprovalNote is what an [Approver] may add to the audit records of the
// mutation it approves, with [NoteApproval].
type ApprovalNote struct {
	// Grant is the code of the out-of-band grant that approved it.
	Grant string
	// Operator names the person who approved it out of band.
	Operator string
}

type approvalNoteKey struct{}

func withApprovalNote(ctx context.Context, n *ApprovalNote) context.Context {
	return context.WithValue(ctx, approvalNoteKey{}, n)
}

// NoteApproval records, for the "approved" and "submitted" audit records
// of the mutation being approved, who approved it and how. An approver
// calls it from Approve with the ctx it was given, before returning nil;
// outside Approve it does nothing. No secret may go in.
func NoteApproval(ctx context.Context, n ApprovalNote) {
	if p, ok := ctx.Value(approvalNoteKey{}).(*ApprovalNote); ok {
		*p = n
	}
}
