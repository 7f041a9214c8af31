package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestTextHelpers: the words every tool answer is built from: a guest's
// label with its name cleaned, durations and sizes a person reads, and
// "none" for an empty value.
func TestTextHelpers(t *testing.T) {
	t.Parallel()
	tg := proxmoxsafe.Target{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}
	if got := guestLabel(tg, "web\u202e01\x1b"); strings.ContainsAny(got, "\u202e\x1b") || !strings.Contains(got, "100") || !strings.Contains(got, "web") {
		t.Errorf("guestLabel = %q", got)
	}
	if got := orNone(""); got != "none" {
		t.Errorf("orNone(\"\") = %q", got)
	}
	if got := orNone("x"); got != "x" {
		t.Errorf("orNone(x) = %q", got)
	}
	if got := gib(3 << 29); got != "1.5 GiB" {
		t.Errorf("gib = %q", got)
	}
	if got := clean(strings.Repeat("a", 50), 10); len(got) > 10 {
		t.Errorf("clean kept %d bytes of a 10-byte cap", len(got))
	}
	for sec, want := range map[int64]string{59: "0m", 3700: "1h 1m", 90061: "1d 1h"} {
		if got := duration(sec); got != want {
			t.Errorf("duration(%d) = %q, want %q", sec, got, want)
		}
	}
	if got := guestLabel(proxmoxsafe.Target{Node: "pve2", Type: proxmoxsafe.TypeLXC, VMID: 200}, ""); got != "container 200 on pve2" {
		t.Errorf("guestLabel of a nameless container = %q", got)
	}
}
