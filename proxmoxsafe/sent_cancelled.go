package proxmoxsafe

import (
	"context"
	"fmt"
)

// A mutating request that is on its way to Proxmox cannot be called back:
// abandoning it when the caller's context ends (an MCP client's
// notifications/cancelled, the server's shutdown, a wait deadline) only
// loses the answer — the task id of what Proxmox started — and leaves the
// audit log saying "may have reached Proxmox". So once the request is
// being sent, its one exchange is finished on a context the caller's
// cancellation does not reach, bounded by the per-request timeout
// ([Config.Timeout]; see pve.Client.DoCommitted); the answer is audited
// as submitted, and the caller gets the receipt together with
// [*SentBeforeCancelError]. Nothing that was not already being sent goes
// out after the cancellation: no 401 retry, no wait, no other request.

// SentBeforeCancelError is returned with the receipt of a mutation whose
// request was already being sent when the caller's context ended: Proxmox
// answered, the answer was audited as submitted, and the task (UPID)
// runs in Proxmox; it was not waited for. errors.Is matches the context's
// error (context.Canceled or context.DeadlineExceeded).
type SentBeforeCancelError struct {
	// UPID is the task Proxmox started; "" when Proxmox applied the
	// request before answering (Synchronous) or answered no task id.
	UPID string
	// Receipt is the mutation's receipt (also returned beside the error).
	Receipt *Receipt
	// Err is the context's error.
	Err error
}

// Error says the request was sent and names the task to check.
func (e *SentBeforeCancelError) Error() string {
	if e.UPID == "" {
		return fmt.Sprintf("cancelled after the request was sent: Proxmox carried it out before answering (no task); read the guest's state to see the result (%v)", e.Err)
	}
	return fmt.Sprintf("cancelled after the request was sent: Proxmox accepted it and task %s is running in Proxmox; it was not waited for: check it with task_status before trying again (%v)", e.UPID, e.Err)
}

// Unwrap returns the cancellation, so errors.Is(err, context.Canceled)
// holds.
func (e *SentBeforeCancelError) Unwrap() error { return e.Err }

// sentBeforeCancel returns r with a *SentBeforeCancelError when ctx ended
// while r's request was being sent, else r and nil.
func sentBeforeCancel(ctx context.Context, r *Receipt) (*Receipt, error) {
	if ctx.Err() == nil || r == nil {
		return r, nil
	}
	return r, &SentBeforeCancelError{UPID: r.UPID, Receipt: r, Err: context.Cause(ctx)}
}
