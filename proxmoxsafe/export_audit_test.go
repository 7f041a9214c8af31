package proxmoxsafe

// SetAuditVerifyHooks sets the hooks that run when a background audit log
// verification starts (verify) and when a Record starts waiting for one
// (wait), and returns a function that removes them. Tests that set them
// must not run in parallel with others that open logs in the background.
func SetAuditVerifyHooks(verify, wait func()) (restore func()) {
	auditVerifyHook, auditWaitHook = verify, wait
	return func() { auditVerifyHook, auditWaitHook = nil, nil }
}
