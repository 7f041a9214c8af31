package mcpserver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The small texts of tool answers: guests, durations, sizes, receipts.

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// clean makes a value from Proxmox safe for a one-line text, whatever the
// library already did: defense in depth.
func clean(s string, max int) string {
	out, _ := sanitize.CapLine(s, max)
	return out
}

// guestLabel names a guest for humans: "VM 101 (web1) on pve1".
func guestLabel(t proxmoxsafe.Target, name string) string {
	kind := "VM"
	if t.Type == proxmoxsafe.TypeLXC {
		kind = "container"
	}
	l := kind + " " + strconv.Itoa(t.VMID)
	if n := clean(name, 64); n != "" {
		l += " (" + n + ")"
	}
	return l + " on " + t.Node
}

func duration(sec int64) string {
	d, h, m := sec/86400, sec%86400/3600, sec%3600/60
	switch {
	case d > 0:
		return fmt.Sprintf("%dd %dh", d, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func receiptText(what string, r *proxmoxsafe.Receipt) string {
	text := what + ": task " + clean(r.UPID, 256)
	if r.Synchronous && r.UPID == "" {
		text = what + ": Proxmox applied it before answering (no task)"
	}
	if r.Note != "" {
		text += ". Note: " + clean(r.Note, 512)
	}
	return text
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

// newGuestLabel names the guest a provision receipt creates.
func newGuestLabel(r *proxmoxsafe.Receipt) string {
	if r.NewGuest == nil {
		return guestLabel(r.Target, "")
	}
	return guestLabel(r.NewGuest.Target(), "")
}
