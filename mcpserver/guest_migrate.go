package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestMigrateTool declares the guest_migrate tool.
func guestMigrateTool() toolDef {
	return mutationTool(ToolInfo{
		Name:  ToolGuestMigrate,
		Title: "Migrate a guest to another node",
		Description: "Move one guest to another node of the cluster: a running VM live (online: true), a stopped VM offline; with_local_disks: true also copies the VM's disks on node-local storage; a running container only in restart mode (restart: true: shut down, moved, started again; timeout bounds the shutdown). Containers cannot be live-migrated. An HA-managed guest is moved by the HA manager (an hamigrate task). " +
			"Refused (nothing is done) unless the operator enabled the migrate class and allows both nodes and does not protect the guest, the target is another online cluster member, the guest is not locked and not a template, the options fit its power state, and Proxmox's own precheck (GET …/migrate) reports no blocker (target not allowed, local disks without with_local_disks, host devices). " +
			"Needs the approval phrase \"APPROVE migrate <node>/<type>/<vmid> target=<target>\" plus \" online=1\", \" with-local-disks=1\", \" restart=1\", \" timeout=<n>\" for each option given, unless the operator set another approval level: call with plan: true or without approval first and show the user the answer (exact phrase, current state, effect, Proxmox's precheck). " +
			"Returns a receipt with the task UPID (qmigrate, vzmigrate or hamigrate); with wait: true it waits (timeout_seconds) until the cluster resource list shows the guest on the target node.",
		Class:       proxmoxsafe.ClassMigrate,
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpMigrateGuest), (*proxmoxsafe.Client).MigrateGuest, func(_ proxmoxsafe.MigrateGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("migration", r) + " to node " + clean(r.TargetNode, 64)
	}).approvalShowing("the exact phrase, the current state and Proxmox's precheck")
}
