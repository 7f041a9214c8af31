package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestMigrateTool declares the guest_migrate tool.
func guestMigrateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestMigrate,
		Title:       "Migrate a guest to another node",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpMigrateGuest), (*proxmoxsafe.Client).MigrateGuest, func(_ proxmoxsafe.MigrateGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("migration", r) + " to node " + clean(r.TargetNode, 64)
	}).describingParams(map[string]string{
		"node": "Node the guest is on now. It must be on the operator's node allowlist.",
	}).describedBy(mutationWords{
		does:    "Move one guest to another node of the cluster: a running VM live (online: true), a stopped VM offline; with_local_disks: true also copies the VM's disks on node-local storage; a running container only in restart mode (restart: true: shut down, moved, started again; timeout bounds the shutdown). Containers cannot be live-migrated. An HA-managed guest is moved by the HA manager (an hamigrate task).",
		allows:  "allows both nodes and does not protect the guest",
		unless:  "the target is another online cluster member, the guest is not locked and not a template, the options fit its power state, and Proxmox's own precheck (GET …/migrate) reports no blocker (target not allowed, local disks without with_local_disks, host devices)",
		shows:   "the exact phrase, the current state and Proxmox's precheck",
		returns: "the task UPID (qmigrate, vzmigrate or hamigrate)",
		waits:   "then until the cluster resource list shows the guest on the target node",
	})
}
