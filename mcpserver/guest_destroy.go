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
		does:   "Delete one stopped guest for good: disks, snapshots, config, firewall, permissions (only a backup brings it back); purge and destroy_unreferenced_disks must be chosen.",
		unless: "it is stopped, not protected in Proxmox, HA-managed only with purge",
		also:   "Plan first and show the user what will be lost.",
	})
}

// destroyAnnotations: destructive, and not idempotent (a second call is
// refused: the guest is gone).
var destroyAnnotations = cleanupAnnotations
