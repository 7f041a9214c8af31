package proxmoxsafe

import (
	"regexp"
	"strings"
	"testing"
)

// Checks that run on every start are written out instead of matched with
// regular expressions (issue 14); each is held to its pattern here.

// TestValidNodeIsNodePattern: ValidNode is written out (no regexp at
// start, issue 14); it must accept exactly what NodePattern accepts. Every
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

// TestKeyFamilyIsPattern: keyFamily (written out, issue 14) finds exactly
// the family keyFamilyPattern's first group would, for every string of up
// to 4 bytes over letters of both cases, digits and other characters.
func TestKeyFamilyIsPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(keyFamilyPattern)
	alphabet := []string{"a", "z", "A", "0", "9", "-", ".", "_", "é", "\xff"}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		family, ok := keyFamily(s)
		m := re.FindStringSubmatch(s)
		if ok != (m != nil) || ok && family != m[1] {
			t.Errorf("keyFamily(%q) = %q, %v; pattern %q", s, family, ok, m)
		}
		if depth > 0 {
			for _, c := range alphabet {
				walk(s+c, depth-1)
			}
		}
	}
	walk("", 4)
	for _, k := range []string{"hostpci0", "usb12", "mp0", "net0", "virtiofs3", "Usb3"} {
		family, ok := keyFamily(k)
		m := re.FindStringSubmatch(k)
		if ok != (m != nil) || ok && family != m[1] {
			t.Errorf("keyFamily(%q) = %q, %v; pattern %q", k, family, ok, m)
		}
	}
}
