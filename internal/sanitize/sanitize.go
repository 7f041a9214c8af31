// Package sanitize makes strings that came from Proxmox safe to place in
// front of an AI model or a terminal.
//
// Everything Proxmox returns that a guest owner or another admin can write —
// guest names, descriptions, notes, task error texts, agent data — is
// untrusted. The risk this package addresses is text that a model reads but a
// human reviewing the same output does not see, or sees differently: terminal
// escape sequences, control characters, zero-width and BiDi characters and
// Unicode "tag" characters (which can smuggle whole invisible sentences).
// It removes those; it does not try to judge what visible text means.
package sanitize

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18 // cancels an escape sequence in progress (ECMA-48, xterm)
	sub = 0x1a // same effect as CAN
)

// asciiKeep[c] is true for the ASCII bytes that pass through unchanged; a
// table keeps the clean fast path to one load and branch per byte.
var asciiKeep = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\n'] = true
	t['\t'] = true
	return t
}()

// stripped reports whether the non-ASCII rune r is one String removes. It
// covers C1 controls and the invisible formatting characters that can hide
// or reorder text for a human while a model still reads it.
func stripped(r rune) bool {
	switch {
	case r < 0xa0:
		return r >= 0x80 // C1 controls
	case r < 0x0600:
		return r == 0x00ad // soft hyphen: invisible unless a line breaks there
	case r < 0x2000:
		return r == 0x061c || r == 0x180e // Arabic letter mark, Mongolian vowel separator
	case r <= 0x206f:
		return r >= 0x200b && r <= 0x200f || // zero-width space/non-joiner/joiner, LRM, RLM
			r >= 0x202a && r <= 0x202e || // BiDi embeddings and overrides
			r >= 0x2060 && r <= 0x2064 || // word joiner, invisible math operators
			r >= 0x2066 // BiDi isolates and deprecated format characters (to U+206F)
	case r < 0xfeff:
		return false
	case r <= 0xfffb:
		return r == 0xfeff || r >= 0xfff9 // BOM/ZWNBSP; interlinear annotation marks
	case r < 0x1d173:
		return false
	case r <= 0x1d17a:
		return true // musical symbol formatting controls: invisible
	default:
		return r >= 0xe0000 && r <= 0xe007f // tag characters
	}
}

// firstDirty returns the byte offset of the first position where String would
// change s, or len(s) if s is clean. It does not allocate.
func firstDirty(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiKeep[c] {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || stripped(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// Clean reports whether s is already clean, that is String(s) == s, without
// allocating. Use it to validate instead of transform.
func Clean(s string) bool {
	return firstDirty(s) == len(s)
}

// String removes what could hide text from a human reader or drive a
// terminal:
//
//   - ANSI/ECMA-48 escape sequences, whole: CSI (ESC [ … final byte), the
//     string sequences OSC, DCS, SOS, PM and APC (ESC ] P X ^ _ … up to BEL,
//     ESC \ or U+009C), and other ESC sequences (ESC, optional intermediate
//     bytes, final byte); the C1 forms U+009B, U+009D, U+0090, U+0098,
//     U+009E and U+009F start the same sequences. An unterminated string
//     sequence (e.g. OSC) swallows the rest of s, as a terminal would;
//     an unterminated CSI is dropped up to the first byte that cannot
//     belong to it;
//   - C0 controls except '\n' and '\t', DEL, and C1 controls;
//   - zero-width characters (U+200B–U+200D, U+2060, U+FEFF, U+180E), BiDi
//     controls (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, U+061C),
//     Unicode tag characters (U+E0000–U+E007F), and the other invisible
//     format characters U+00AD, U+2061–U+2064, U+206A–U+206F,
//     U+FFF9–U+FFFB and U+1D173–U+1D17A.
//
// Each maximal run of invalid UTF-8 bytes becomes one U+FFFD, so that the
// result is always valid UTF-8 and the reader sees that something was there.
//
// The result is never longer than s when s is valid UTF-8. Invalid UTF-8 is
// the one exception: a run of n invalid bytes becomes 3 bytes, so the result
// can grow by at most 2 bytes per invalid byte. Callers that need a byte
// bound should use [Cap].
//
// String is idempotent, and returns s itself, without allocating, when s is
// already clean.
func String(s string) string {
	i := firstDirty(s)
	if i == len(s) {
		return s
	}
	// A Builder hands its buffer over without a second copy.
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == esc:
				i = skipEscape(s, i+1)
			case asciiKeep[c]:
				b.WriteByte(c)
				i++
			default:
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			for i < len(s) {
				if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size != 1 {
					break
				}
				i++
			}
			b.WriteString("\uFFFD")
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, SOS, PM, APC
			i = skipString(s, i+size)
		case stripped(r):
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// skipEscape returns the offset just past the escape sequence whose ESC byte
// preceded offset i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f: // intermediate bytes, then a final byte (nF)
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e: // two-byte sequence (Fp, Fe, Fs)
		return i + 1
	default:
		// Not a sequence: drop the ESC alone and let the caller look at
		// the next byte on its own.
		return i
	}
}

// skipCSI returns the offset just past a control sequence whose introducer
// ends before offset i. A byte that cannot be part of the sequence ends it
// without being consumed, so visible text after a malformed sequence
// survives; CAN and SUB cancel it and are consumed.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f { // parameter bytes
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f { // intermediate bytes
		i++
	}
	if i < len(s) && (s[i] >= 0x40 && s[i] <= 0x7e || s[i] == can || s[i] == sub) { // final byte
		i++
	}
	return i
}

// skipString returns the offset just past a command string (OSC, DCS, SOS,
// PM, APC) whose introducer ends before offset i. Terminals hide everything
// up to the terminator, so this does too, to the end of s if there is none.
func skipString(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case bel, can, sub:
			return i + 1
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			// Any other ESC aborts the string and starts a new sequence.
			return i
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0x9c { // U+009C STRING TERMINATOR
				return i + 2
			}
		}
	}
	return i
}

// isLineBreak reports whether r is one of the characters Line turns into a
// space: the ones String keeps that would start a new line or column.
func isLineBreak(r rune) bool {
	return r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029'
}

// hasLineBreak reports whether s holds a character isLineBreak accepts. It
// is strings.ContainsAny(s, "\n\t\u2028\u2029") without its per-rune
// search, which took a millisecond for a 100 KB name.
func hasLineBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\t':
			return true
		case 0xe2: // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				return true
			}
		}
	}
	return false
}

// Line is String for single-line fields such as names: each run of
// newlines, tabs, U+2028 and U+2029 becomes one space and the result is
// trimmed of surrounding white space, so a value cannot fake extra lines
// or columns in a listing. Like String it does not allocate for input that
// is already a clean single line.
func Line(s string) string {
	s = String(s)
	if !hasLineBreak(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	inBreak := false
	for _, r := range s {
		if isLineBreak(r) {
			if !inBreak {
				b.WriteByte(' ')
			}
			inBreak = true
			continue
		}
		inBreak = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// CapLine returns Cap(Line(s), maxBytes), but reads only the start of a
// string much longer than maxBytes: Proxmox returns names and tags of any
// length, and sanitizing all of a 100 KB guest name to keep 128 bytes of it
// dominated a listing. Line of a prefix (cut on a rune boundary)
// is a prefix of Line of the whole string: escape sequences, stripped
// characters and line-break runs cut by the end of the prefix produce no
// output there, and the trailing space Line trims would be followed by more
// text. So once Line of the prefix is longer than maxBytes, the cut falls
// inside it and the result is the same; otherwise (text that is mostly
// stripped) the whole string is read. FuzzCapLine checks the equality.
func CapLine(s string, maxBytes int) (out string, truncated bool) {
	if window := 2*maxBytes + 64; maxBytes >= 0 && len(s) > window {
		cut := window
		for i := 0; i < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]); i++ {
			cut--
		}
		if l := Line(s[:cut]); len(l) > maxBytes {
			return Cap(l, maxBytes)
		}
	}
	return Cap(Line(s), maxBytes)
}

// ellipsis marks a cut; it counts against Cap's byte budget.
const ellipsis = "…"

// Cap returns String(s) cut to at most maxBytes bytes, so that one field
// cannot crowd everything else out of a model's context. The cut falls on a
// rune boundary and ends with "…", which counts within maxBytes; truncated
// reports whether a cut was made. If maxBytes is too small for the ellipsis
// (under 3 bytes) the result is cut without one; if maxBytes <= 0 it is empty.
func Cap(s string, maxBytes int) (out string, truncated bool) {
	s = String(s)
	if len(s) <= maxBytes {
		return s, false
	}
	if maxBytes <= 0 {
		return "", true
	}
	limit, mark := maxBytes-len(ellipsis), ellipsis
	if limit < 0 {
		limit, mark = maxBytes, ""
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + mark, true
}

// echoMax is how much of a value Quote shows: enough to recognise a typo,
// short enough that a 60 KB value pasted into a setting does not bury the
// error's advice under itself.
const echoMax = 64

// Quote returns s quoted as %q would, cut to its first 64 bytes (on a rune
// boundary) with the full length named, for echoing what an operator typed
// back in an error. Control characters are escaped by the quoting.
func Quote[S ~string](v S) string {
	s := string(v)
	if len(s) <= echoMax {
		return strconv.Quote(s)
	}
	cut := runeCut(s, echoMax)
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip returns s, or its first maxBytes bytes (on a rune boundary) and
// "… (N bytes)" when it is longer: Quote for text shown unquoted, such as a
// file path in an error.
func Clip(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	return s[:runeCut(s, maxBytes)] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// runeCut is the largest rune boundary in s at or below n (n < len(s)).
func runeCut(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
