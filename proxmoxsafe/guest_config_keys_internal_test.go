package proxmoxsafe

import (
	"regexp"
	"testing"
)

// TestKeyFamilyIsPattern: keyFamily (written out: no regexp compiled at start) finds exactly
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
