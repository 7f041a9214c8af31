package mcpserver

// infraReadTools are the cluster infrastructure read tools (storage,
// backups, Ceph, HA, permissions), listed after the guest read tools.
func infraReadTools() []toolDef {
	return nil
}
