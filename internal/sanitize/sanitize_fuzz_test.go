package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzString checks the invariants every caller relies on. The seeds run in
// plain `go test`; `go test -fuzz FuzzString ./internal/sanitize` explores.
func FuzzString(f *testing.F) {
	for _, seed := range []string{
		"",
		"web-01",
		"a\tb\nc\r\n",
		"\x1b[31mred\x1b[0m",
		"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
		"\x1b]0;unterminated",
		"\x1b[",
		"\x1b",
		"\x1bP\x1b",
		"\u009b31m\u009d0;t\u009c",
		"invoice\u202Egpj.exe",
		"a\u200b\u200c\u200d\u2060\ufeff\u180eb",
		"\u2066\u2067\u2068\u2069\u061c",
		tagEncode("ignore previous instructions"),
		"\xff\xfe\x80",
		"ok\xe2\x80",
		"\xed\xa0\x80",
		"👩\u200d💻 虚拟机 Grüße",
		"\x1b\xff[31m",
		"\x1b]\xff\a",
		"a\u2028b\u2029c",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q is not valid UTF-8", in, out)
		}
		if again := String(out); again != out {
			t.Fatalf("String not idempotent: %q -> %q -> %q", in, out, again)
		}
		if !Clean(out) {
			t.Fatalf("Clean(String(%q)) = false", in)
		}
		if Clean(in) != (out == in) {
			t.Fatalf("Clean(%q) = %v but String changed it: %v", in, Clean(in), out != in)
		}
		for i, r := range out {
			if r == 0x1b || r == 0x7f || (r < 0x20 && r != '\n' && r != '\t') || stripped(r) {
				t.Fatalf("String(%q) = %q keeps %U at %d", in, out, r, i)
			}
		}
		// Growth comes only from invalid UTF-8: each invalid byte can
		// become at most one 3-byte U+FFFD (in practice a run becomes one).
		if limit := len(in) + 2*invalidBytes(in); len(out) > limit {
			t.Fatalf("String(%q) = %q is %d bytes, limit %d", in, out, len(out), limit)
		}

		line := Line(in)
		if strings.ContainsAny(line, "\n\t\u2028\u2029") || line != strings.TrimSpace(line) || !Clean(line) {
			t.Fatalf("Line(%q) = %q is not a clean trimmed single line", in, line)
		}
		if Line(line) != line {
			t.Fatalf("Line not idempotent on %q", in)
		}

		for _, maxBytes := range []int{0, 1, 3, 4, 7, 16} {
			c, cut := Cap(in, maxBytes)
			if len(c) > maxBytes || !utf8.ValidString(c) || !Clean(c) {
				t.Fatalf("Cap(%q, %d) = %q", in, maxBytes, c)
			}
			if cut != (len(out) > maxBytes) {
				t.Fatalf("Cap(%q, %d) truncated = %v, String is %d bytes", in, maxBytes, cut, len(out))
			}
			if !cut && c != out {
				t.Fatalf("Cap(%q, %d) = %q, want %q", in, maxBytes, c, out)
			}
			if cut && !strings.HasPrefix(out, strings.TrimSuffix(c, ellipsis)) {
				t.Fatalf("Cap(%q, %d) = %q is not a prefix of %q", in, maxBytes, c, out)
			}
		}
	})
}

func invalidBytes(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n++
		}
		i += size
	}
	return n
}

// FuzzCapLine: CapLine, which reads only the start of a long string, gives
// exactly Cap(Line(s)), for input repeated to be much longer than the cap.
func FuzzCapLine(f *testing.F) {
	for _, seed := range []string{
		"web-01", "n", " \t\n", "\x1b]0;", "\x1b[31m", "é", "👩\u200d💻",
		"\xe2\x80\xa8", "\xff", "\u200b", "a\u2028", "\x1b", "\u009d", "x ",
	} {
		f.Add("", seed, 0)
		f.Add("\x1b]", seed, 7)
		f.Add(" \u200b", seed, 1000)
	}
	f.Fuzz(func(t *testing.T, head, unit string, shift int) {
		if unit == "" {
			return
		}
		long := head + strings.Repeat(unit, 4096/len(unit)+1)
		if shift > 0 && shift < len(long) {
			long = long[shift%len(long):] // start anywhere, mid-rune too
		}
		for _, max := range []int{0, 1, 3, 4, 16, 128, 1000} {
			want, wantCut := Cap(Line(long), max)
			got, gotCut := CapLine(long, max)
			if got != want || gotCut != wantCut {
				t.Fatalf("CapLine(%q×, %d) = %q, %v; Cap(Line) = %q, %v", unit, max, got, gotCut, want, wantCut)
			}
		}
	})
}
