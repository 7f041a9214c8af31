package proxmoxsafe

import (
	"regexp"
	"strings"
	"testing"
)

// Checks that run on every start are written out instead of matched with
// regular expressions (compiling a pattern cost more than the check, and
// a server pays it before its first answer); each is held to its pattern
// here.

// TestValidNodeIsNodePattern: ValidNode is written out (no regexp
// compiled at start); it must accept exactly what NodePattern accepts. Every
// string of up to 4 bytes over an alphabet holding each character class
// the pattern distinguishes (and some it must refuse), plus the length
// bound on both sides. FuzzValidators checks it against an independent
// restatement as well.
func TestValidNodeIsNodePattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(NodePattern)
	alphabet := []string{"a", "Z", "0", "9", "-", ".", "_", "/", " ", "\n", "\x00", "é", "\xff"}
	var walk func(prefix string, depth int)
	n := 0
	walk = func(prefix string, depth int) {
		n++
		if got, want := ValidNode(prefix), re.MatchString(prefix); got != want {
			t.Errorf("ValidNode(%q) = %v, NodePattern says %v", prefix, got, want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+c, depth-1)
		}
	}
	walk("", 4)
	for _, s := range []string{
		strings.Repeat("a", MaxNodeLen), strings.Repeat("a", MaxNodeLen+1),
		"a" + strings.Repeat("-", MaxNodeLen-2) + "b", "a" + strings.Repeat("-", MaxNodeLen-1) + "b",
		"pve1\n", "\npve1", "pve-1-a",
	} {
		if got, want := ValidNode(s), re.MatchString(s); got != want {
			t.Errorf("ValidNode(%q) = %v, NodePattern says %v", s, got, want)
		}
	}
	if n < 30000 {
		t.Fatalf("only %d strings checked", n)
	}
}
