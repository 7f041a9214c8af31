package auditlog

// SetVerifyHooks sets the hooks that run when a background audit log
// verification starts (verify) and when a Record starts waiting for one
// (wait), and returns a function that removes them. Tests that set them
// must not run in parallel with others that open logs in the background.
func SetVerifyHooks(verify, wait func()) (restore func()) {
	verifyHook, waitHook = verify, wait
	return func() { verifyHook, waitHook = nil, nil }
}
