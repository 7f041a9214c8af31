package mcphttp

// SetSSEConnected sets the hook that runs between a legacy SSE session's
// Connect and its registration for Shutdown, and returns the restore.
func SetSSEConnected(f func()) (restore func()) {
	old := sseConnected
	sseConnected = f
	return func() { sseConnected = old }
}

// CallSessions is how many sessions have calls in flight recorded for
// honouring cancellations (none once their POSTs are over).
func (h *Handler) CallSessions() int { return h.cancels.sessions() }
