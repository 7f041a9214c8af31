// Package grant is the "grant" approval level of [proxmoxsafe]: out-of-band,
// single-use approvals kept as files in a private directory.
//
// A mutation whose class is approved at the grant level
// ([proxmoxsafe.LevelGrant]) is refused the first time with a
// [*RequiredError] that names a code (e.g. K7QF-3MZD) and the plan. The
// operator decides it outside the MCP session — the binary's
// "proxmox-safe-mcp approve CODE" and "deny CODE", or the approval page
// (package approvalweb), both call [Store.Decide] — and the same call,
// repeated unchanged, then runs once. A grant is bound to the action, the
// target, the effect-changing parameters, the digest of the exact
// arguments ([proxmoxsafe.ArgumentsDigest]) and the fingerprint of the
// guest state shown ([proxmoxsafe.GuestState.Fingerprint]); a call that
// differs in any of them gets a new code.
//
// A [Store] is a [proxmoxsafe.Approver]: put it in
// [proxmoxsafe.Config.Approvers]. It also keeps the single-use nonces of
// other approvers that must stay used across a restart ([Store.UseNonce],
// the MCP elicitation with a persistent key).
//
// The dependency points one way: this package imports proxmoxsafe, never
// the reverse; the pipeline knows only the [proxmoxsafe.Approver] contract,
// the level's name and the [proxmoxsafe.ApprovalNote] an approver leaves
// for the audit record.
package grant
