package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// guestDestroyTool declares the guest_destroy tool.
func guestDestroyTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestDestroy,
		Title:       "Destroy a guest",
		Annotations: destroyAnnotations,
	}, ops(proxmoxsafe.OpDestroyGuest), (*proxmoxsafe.Client).DestroyGuest, func(_ proxmoxsafe.DestroyGuestInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("destroy", r)
	}).describedBy(mutationWords{
		does:    "Delete one stopped VM or container for good: its disks, snapshots, configuration, firewall rules and permissions; only a backup can bring it back. purge and destroy_unreferenced_disks are required choices: purge also removes it from backup jobs, replication jobs and HA (needed for an HA-managed guest); destroy_unreferenced_disks also deletes disks with its VMID that its configuration does not name.",
		unless:  "the guest is stopped, not locked, not protected by Proxmox's protection flag, not HA-managed without purge, and not a template that linked clones still use",
		also:    "Call with plan: true first and show the user what will be lost (disks with sizes, snapshots).",
		shows:   "what will be lost and how to approve",
		returns: "the task UPID (qmdestroy or vzdestroy)",
		waits:   "then until the guest is gone from the cluster resources",
	})
}

// destroyAnnotations: destructive, and not idempotent (a second call is
// refused: the guest is gone).
var destroyAnnotations = cleanupAnnotations
