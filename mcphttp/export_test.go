package mcphttp

// SetSSEConnected sets the hook that runs between a legacy SSE session's
// Connect and its registration for Shutdown, and returns the restore.
func SetSSEConnected(f func()) (restore func()) {
	old := sseConnected
	sseConnected = f
	return func() { sseConnected = old }
}
