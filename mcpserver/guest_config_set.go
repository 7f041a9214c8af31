package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guestConfigSetTool declares the guest_config_set tool.
func guestConfigSetTool() toolDef {
	return mutationTool(ToolInfo{
		Name:        ToolGuestConfigSet,
		Title:       "Set guest config",
		Annotations: configSetAnnotations,
	}, ops(proxmoxsafe.OpSetGuestConfig), (*proxmoxsafe.Client).SetGuestConfig, func(_ proxmoxsafe.SetGuestConfigInput, r *proxmoxsafe.Receipt) string {
		return ofGuest("config change ("+changesText(r.Changes)+")", r)
	}).describedBy(mutationWords{
		does:    "Set or delete config keys of one guest: set maps keys to values (strings: numbers as digits, memory in MiB, booleans 0 or 1, tags separated by ;), delete lists keys to remove. Only keys on the operator's allowlist (default: cores, sockets, memory, balloon, name, description, tags, onboot; for containers hostname and swap); never args, hookscript, hostpci*, usb*, serial*, parallel*, raw lxc.*, mp*, cicustom or secrets (cipassword, sshkeys). Values are checked against Proxmox's schema before anything is sent.",
		unless:  "the guest is not locked and not a template; a delete of a key that is not set, a change that changes nothing and a balloon above the memory are refused",
		also:    "The request carries the digest of the config read, so Proxmox refuses it if the config changed meanwhile.",
		phrase:  "<key>=<value> for every key set, sorted by key; a description as sha256:<16 hex digits>",
		shows:   "the exact phrase and every key's current and new value",
		returns: "changes (current, pending, new per key) and the task UPID (VMs: qmconfig; containers: none, Proxmox applies it before answering)",
		waits:   "verifies that every change reads back",
		after:   "A running guest takes some changes at once; others (a VM's cores, sockets, memory without memory hotplug) wait for its next start and are reported in outcome.pending, not as applied.",
	})
}

// configSetAnnotations: setting config overwrites or deletes values (a
// destructive update in MCP's sense); growing a disk loses nothing, but
// cannot be undone either, so neither is idempotent.
var configSetAnnotations = mcp.ToolAnnotations{
	ReadOnlyHint:    false,
	IdempotentHint:  false,
	DestructiveHint: ptr(true),
	OpenWorldHint:   ptr(false),
}
