package proxmoxsafe

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// TestTextFromProxmox: a line from Proxmox comes back sanitized (no
// control or invisible characters) and capped, capLine says when it cut;
// a tag list is split, cleaned, capped per tag and in number, never nil.
func TestTextFromProxmox(t *testing.T) {
	t.Parallel()
	if got := line("web\x1b[31m\u202e01\n", 64); strings.ContainsAny(got, "\x1b\u202e\n") || !strings.HasPrefix(got, "web") {
		t.Errorf("line = %q, want the text without control characters", got)
	}
	if got, cut := capLine(strings.Repeat("a", 10), 4); len(got) > 4 || !cut {
		t.Errorf("capLine(10 a, 4) = %q, %v; want at most 4 bytes and cut", got, cut)
	}
	if got, cut := capLine("abc", 4); got != "abc" || cut {
		t.Errorf("capLine(abc, 4) = %q, %v", got, cut)
	}
	if got := capTags(""); got == nil || len(got) != 0 {
		t.Errorf("capTags(\"\") = %#v, want an empty list", got)
	}
	if got := capTags("prod;web, db \u200b"); !slices.Equal(got, []string{"prod", "web", "db"}) {
		t.Errorf("capTags = %q", got)
	}
	many := strings.Repeat("t;", maxTags+5)
	if got := capTags(many); len(got) != maxTags {
		t.Errorf("capTags kept %d tags, want %d", len(got), maxTags)
	}
	if got := capTags(strings.Repeat("x", maxTagLen+10)); len(got) != 1 || len(got[0]) > maxTagLen {
		t.Errorf("a long tag came back as %q", got)
	}
}

func TestNonNegativeAndSortedKeys(t *testing.T) {
	t.Parallel()
	if nonNegative(pve.Int(-5)) != 0 || nonNegative(pve.Int(7)) != 7 {
		t.Error("nonNegative: a negative count must read as 0, others unchanged")
	}
	if got := sortedKeys(map[string]int{"b": 1, "a": 2, "c": 3}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("sortedKeys = %v", got)
	}
	if got := sortedKeys(map[string]bool{}); got == nil || len(got) != 0 {
		t.Errorf("sortedKeys of an empty map = %#v", got)
	}
}
