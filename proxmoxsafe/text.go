package proxmoxsafe

import (
	"slices"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// Text from Proxmox: every string is sanitized and capped before it
// leaves this package.

// line sanitizes a single-line string from Proxmox and caps it.
func line(s string, max int) string {
	out, _ := sanitize.CapLine(s, max)
	return out
}

// capLine sanitizes a single line of text from Proxmox, caps it, and says
// whether it was cut.
func capLine(s string, max int) (string, bool) {
	return sanitize.CapLine(s, max)
}

// capTags splits, sanitizes and caps a tag list; never nil.
func capTags(s string) []string {
	out := []string{}
	for _, t := range splitTags(s) {
		if len(out) == maxTags {
			break
		}
		if t = line(t, maxTagLen); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func nonNegative(n pve.Int) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
