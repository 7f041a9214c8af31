package proxmoxsafe

import (
	"context"
	"testing"
)

// TestNoteApproval: an approver's note reaches the record the pipeline
// keeps for the call it approves; outside an approval it goes nowhere.
func TestNoteApproval(t *testing.T) {
	t.Parallel()
	var kept ApprovalNote
	ctx := withApprovalNote(t.Context(), &kept)
	NoteApproval(ctx, ApprovalNote{Grant: "K7QF-3MZD", Operator: "alice"})
	if kept != (ApprovalNote{Grant: "K7QF-3MZD", Operator: "alice"}) {
		t.Errorf("kept = %+v", kept)
	}
	NoteApproval(context.Background(), ApprovalNote{Grant: "X"}) // must not panic
}
