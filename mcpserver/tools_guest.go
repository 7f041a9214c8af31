package mcpserver

// guestReadTools are the per-guest read tools (status, config, snapshots,
// tasks), listed after the original read tools.
func guestReadTools() []toolDef {
	return nil
}
