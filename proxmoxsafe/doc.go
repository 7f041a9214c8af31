// Package proxmoxsafe lets automation and AI agents observe and operate a
// Proxmox VE cluster safely.
//
// A [Client] offers typed, context-first operations: reads
// ([Client.ClusterStatus], [Client.NodeStatus], [Client.ListGuests],
// [Client.GuestStatus], [Client.GuestConfig] (secrets redacted),
// [Client.ListSnapshots], [Client.TaskStatus], [Client.TaskState],
// [Client.TaskLog], [Client.ListTasks], [Client.WaitTask]) and mutations
// ([Client.GuestPower], [Client.SnapshotGuest]). Every mutation runs the
// same pipeline, in this order:
//
//  1. validate the input against Proxmox's own rules (nothing is sent on
//     failure);
//  2. check the operator's [Policy]: mutation class enabled, node on the
//     allowlist, guest not protected, not read-only;
//  3. read the guest's current state and refuse what Proxmox would fail or
//     what is unsafe (locked, template, already in the requested state);
//  4. ask the approvers of the class's approval levels ([Policy.Approvals]);
//     the default, [PhraseApprover], wants the exact phrase from
//     [ApprovalPhrase], e.g. "APPROVE shutdown pve1/qemu/101"; after any
//     other approver, read the state again and re-run the checks;
//  5. write an [AuditRecord] (if that fails, nothing is done);
//  6. send exactly one POST and return a [Receipt] with the task's UPID.
//
// Below the client, an http.RoundTripper lets through only the requests the
// enabled mutation classes need, so even a bug above it cannot reach other
// parts of the Proxmox API. Responses are read through a size limit, decoded
// tolerantly (Proxmox's JSON types vary by version) and every string that
// came from Proxmox is sanitized: control, zero-width and bidirectional
// characters and ANSI escapes are removed, and lengths are capped.
//
// Refusals are errors matching one of the sentinels ([ErrInvalidInput],
// [ErrNotAllowed], [ErrPrecondition], [ErrApprovalRequired], [ErrAudit]);
// their text ends with "no action was taken". Proxmox's own errors are
// *[APIError] values.
//
// The package proxmoxtest provides a fake Proxmox VE server to test
// automation built on this package.
package proxmoxsafe
