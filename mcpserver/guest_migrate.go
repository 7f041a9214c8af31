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
	}).describedBy(mutationWords{
		does:   "Move one guest to another node: a running VM live (online), a stopped one offline; node-local disks need with_local_disks; a running container only by restart. The HA manager moves an HA-managed guest.",
		unless: "the target is online and Proxmox's precheck finds no blocker",
	}).returning("target_node", "plan.precheck")
}
