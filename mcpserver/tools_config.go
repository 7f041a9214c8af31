package mcpserver

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Tool names of the config class (issue 11).
const (
	ToolDiskResize     = "disk_resize"
	ToolGuestConfigSet = "guest_config_set"
)

// The config tools' arguments: the library inputs plus waitArgs.
type (
	resizeDiskArgs struct {
		proxmoxsafe.ResizeDiskInput
		waitArgs
	}
	setGuestConfigArgs struct {
		proxmoxsafe.SetGuestConfigInput
		waitArgs
	}
)

func (a resizeDiskArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.ResizeDiskInput {
	a.Wait = w
	return a.ResizeDiskInput
}

func (a setGuestConfigArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.SetGuestConfigInput {
	a.Wait = w
	return a.SetGuestConfigInput
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

// configTools are the tools of the config class: one to grow a disk, one
// to set config keys; their preconditions, phrases and proofs differ.
func configTools() []toolDef {
	return []toolDef{
		mutationTool[resizeDiskArgs](ToolInfo{
			Name:  ToolDiskResize,
			Title: "Grow a disk",
			Description: "Grow one disk of a guest: size +<n>[K|M|G|T] adds n, <n>[K|M|G|T] is the new total and must be larger than today's. Disks are never shrunk. Only the disk grows: partitions and file systems must be grown inside the guest. " +
				"Refused (nothing is done) unless the operator enabled the config class, allows the node and does not protect the guest, and the guest is not locked and not a template, the disk exists (VM: scsi0…30, virtio0…15, sata0…5, ide0…3, efidisk0, tpmstate0; container: rootfs, mp0…255), has a size and is a storage volume (not a CD-ROM). " +
				"The request carries the digest of the config read, so Proxmox refuses it if the config changed meanwhile. " +
				"Needs the approval phrase \"APPROVE resize <node>/<type>/<vmid> disk=<disk> size=<size>\" unless the operator set another approval level: call without approval first and show the user the refusal (current size, new size, exact phrase). " +
				"Returns a receipt with the task UPID (resize) and changes (the disk's size before and after); with wait: true it waits (timeout_seconds) until the config shows the new size.",
			Class:          proxmoxsafe.ClassConfig,
			Annotations:    snapshotAnnotations,
			ApprovalFormat: "APPROVE resize <node>/<type>/<vmid> disk=<disk> size=<size>",
		}, ops(proxmoxsafe.OpResizeDisk), (*proxmoxsafe.Client).ResizeDisk, func(_ proxmoxsafe.ResizeDiskInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("resize of "+changesText(r.Changes), r)
		}),
		mutationTool[setGuestConfigArgs](ToolInfo{
			Name:  ToolGuestConfigSet,
			Title: "Set guest config",
			Description: "Set or delete config keys of one guest: set maps keys to values (strings: numbers as digits, memory in MiB, booleans 0 or 1, tags separated by ;), delete lists keys to remove. " +
				"Only keys on the operator's allowlist (default: cores, sockets, memory, balloon, name, description, tags, onboot; for containers hostname and swap); never args, hookscript, hostpci*, usb*, serial*, parallel*, raw lxc.*, mp*, cicustom or secrets (cipassword, sshkeys). Values are checked against Proxmox's schema before anything is sent. " +
				"Refused (nothing is done) unless the operator enabled the config class, allows the node and does not protect the guest, and the guest is not locked and not a template; a delete of a key that is not set, a change that changes nothing and a balloon above the memory are refused. The request carries the digest of the config read, so Proxmox refuses it if the config changed meanwhile. " +
				"Needs the approval phrase \"APPROVE config <node>/<type>/<vmid>\" plus \" <key>=<value>\" for every key set (sorted by key; a description as sha256:<16 hex digits>) and \" delete=<keys>\", unless the operator set another approval level: call without approval first and show the user the refusal (every key's current and new value, exact phrase). " +
				"Returns a receipt with changes (current, pending, new per key) and the task UPID (VMs: qmconfig; containers: none, Proxmox applies it before answering); with wait: true it verifies that every change reads back. A running guest takes some changes at once; others (a VM's cores, sockets, memory without memory hotplug) wait for its next start and are reported in outcome.pending, not as applied.",
			Class:          proxmoxsafe.ClassConfig,
			Annotations:    configSetAnnotations,
			ApprovalFormat: "APPROVE config <node>/<type>/<vmid> <key>=<value>…[ delete=<key,…>]",
		}, ops(proxmoxsafe.OpSetGuestConfig), (*proxmoxsafe.Client).SetGuestConfig, func(_ proxmoxsafe.SetGuestConfigInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("config change ("+changesText(r.Changes)+")", r)
		}),
	}
}

// changesText summarizes a receipt's changes: "cores 4 → 8, delete tags".
// Values come from the library: free text is already a digest.
func changesText(changes []proxmoxsafe.ConfigChange) string {
	parts := make([]string, 0, len(changes))
	for _, ch := range changes {
		switch {
		case ch.Delete:
			parts = append(parts, "delete "+clean(ch.Key, 32))
		case ch.Current == "":
			parts = append(parts, clean(ch.Key, 32)+" → "+clean(ch.New, 64))
		default:
			parts = append(parts, clean(ch.Key, 32)+" "+clean(ch.Current, 64)+" → "+clean(ch.New, 64))
		}
	}
	return clean(strings.Join(parts, ", "), 512)
}
