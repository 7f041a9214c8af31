package upid

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that whatever Parse accepts survives a round trip
// through String unchanged, and that String's output is canonical. The seeds
// run in plain `go test`; `go test -fuzz FuzzParse ./internal/upid` explores.
func FuzzParse(f *testing.F) {
	for _, s := range realUPIDs {
		f.Add(s)
		f.Add(strings.ToLower(s))
	}
	for _, s := range []string{
		"",
		"UPID:",
		"UPID:pve:00001234:00005678:5FBE5E6D:startall::root@pam:",
		"UPID:pve-02:00001234:00005678:5FBE5E6D:hastart:100:mcp@pve!safe:",
		"UPID:pve1:0012D687:1A2B3C4D5:66A0B1C2:qmshutdown:101:root@pam:",
		"UPID:n:00000001:000000002:00000003:t:i:u:",
		"UPID:../../../etc/passwd:",
		"UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:/status",
		"UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root\u00a0@pam:",
		"UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:jürgen@pve:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not match ErrInvalid", s, err)
			}
			if Valid(s) {
				t.Fatalf("Valid(%q) = true but Parse failed", s)
			}
			return
		}
		if len(s) > MaxLen {
			t.Fatalf("Parse accepted %d bytes", len(s))
		}
		enc := u.String()
		u2, err := Parse(enc)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but Parse(String()) = %v for %q", s, err, enc)
		}
		if u2 != u {
			t.Fatalf("round trip changed %+v into %+v", u, u2)
		}
		if u2.String() != enc {
			t.Fatalf("String not canonical: %q then %q", enc, u2.String())
		}
		// Canonical form only differs from the input in hex case and in a
		// leading zero of a 9-digit pstart.
		if len(enc) > len(s) || !strings.EqualFold(enc, s) && len(enc) == len(s) {
			t.Fatalf("String() = %q is not a canonical form of %q", enc, s)
		}
	})
}
