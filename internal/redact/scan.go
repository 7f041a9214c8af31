package redact

import (
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// secretArgs is one of the free-text expressions of SecretArgs,
// with what replaceAll needs to run it only where a match can start.
//
// Why: an unanchored search of these expressions (a leading run of name
// characters, case folding, alternations) runs at about 1 MB/s, and the
// gateway applies them to every string of an answer that holds "key",
// "pass" or "token" somewhere: a 1 MB report or changelog cost a second
// of CPU, a 16 MiB answer twenty. Every match starts in a run of name
// characters that holds a needle (secretNeedles), so only such runs need
// to be tried, each with an anchored expression that stops as soon as it
// fails. The result is the same as the unanchored ReplaceAll's
// (TestSecretArgsMatchesReplaceAll, FuzzSecretArgs).
type secretArgs struct {
	re *lazyre.Regexp
	// at matches re at the start of its input; atAfter does the same
	// after one leading character, the one before the candidate
	// position, so that "\b" sees it.
	at, atAfter *lazyre.Regexp
}

func newSecretArgs(pattern string) secretArgs {
	return secretArgs{
		re:      lazyre.New(pattern),
		at:      lazyre.New(`^(?:` + pattern + `)`),
		atAfter: lazyre.New(`^(?s:.)(?:` + pattern + `)`),
	}
}

// maxSecretRun bounds the run of name characters replaceAll tries
// position by position; a longer one (no real name is) sends the whole
// string to the plain expression, linear in its length.
const maxSecretRun = 256

// replaceAll is re.ReplaceAllStringFunc(s, …) with repl given the match's
// submatch indexes into s.
func (x secretArgs) replaceAll(s string, repl func(s string, loc []int) string) string {
	if !fastSecretScan(s) {
		return x.slow(s, repl)
	}
	var out strings.Builder
	copied := 0 // s[:copied] is in out, or replaced
	for from := 0; from < len(s); {
		i := nextNeedle(s, from)
		if i < 0 {
			break
		}
		start := i
		for start > copied && isSecretNameByte(s[start-1]) {
			start--
		}
		end := i
		for end < len(s) && isSecretNameByte(s[end]) {
			end++
		}
		if end-start > maxSecretRun {
			return x.slow(s, repl)
		}
		// A match holding this run's needles in its name starts in the
		// run, at or before its last needle; the leftmost one wins.
		// nextNeedle has scanned s[from:i] and start >= from (the run
		// before ended at from-1 or earlier, or a match ended at from =
		// copied), so the search for the last needle starts at i.
		last := lastNeedle(s[:end], i)
		var loc []int
		for p := start; p <= last && loc == nil; p++ {
			loc = x.matchAt(s, p)
		}
		if loc == nil {
			from = end
			continue
		}
		out.WriteString(s[copied:loc[0]])
		out.WriteString(repl(s, loc))
		copied, from = loc[1], loc[1]
	}
	if copied == 0 {
		return s
	}
	out.WriteString(s[copied:])
	return out.String()
}

// matchAt returns the submatch indexes, into s, of the match starting
// at p, or nil.
func (x secretArgs) matchAt(s string, p int) []int {
	var loc []int
	shift := p
	if p == 0 {
		loc = x.at.Regexp().FindStringSubmatchIndex(s)
	} else {
		shift = p - 1
		loc = x.atAfter.Regexp().FindStringSubmatchIndex(s[shift:])
		if loc != nil {
			loc[0] = 1 // the match proper starts after the context
		}
	}
	for k := range loc {
		if loc[k] >= 0 {
			loc[k] += shift
		}
	}
	return loc
}

// slow is the plain unanchored replacement.
func (x secretArgs) slow(s string, repl func(s string, loc []int) string) string {
	re := x.re.Regexp()
	var out strings.Builder
	copied := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		out.WriteString(s[copied:loc[0]])
		out.WriteString(repl(s, loc))
		copied = loc[1]
	}
	if copied == 0 {
		return s
	}
	out.WriteString(s[copied:])
	return out.String()
}

// fastSecretScan reports whether replaceAll may look for candidates byte
// by byte: the expressions fold case, and with it match "ſ" (U+017F) for
// "s" and the Kelvin sign (U+212A) for "k", the only non-ASCII letters
// that fold to ASCII ones; text holding either takes the plain path.
func fastSecretScan(s string) bool {
	return !strings.Contains(s, "\u017f") && !strings.Contains(s, "\u212a")
}

// isSecretNameByte reports whether c may stand in the name part of a
// match ([a-z0-9_-], case folded).
func isSecretNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// nextNeedle returns the index of the first secretNeedles word at or
// after from, in any case, or -1.
func nextNeedle(s string, from int) int {
	for i := from; i < len(s); i++ {
		if needleAt(s, i) {
			return i
		}
	}
	return -1
}

// lastNeedle returns the index of the last needle that starts in
// s[from:] (from itself when none does; the caller found one there).
func lastNeedle(s string, from int) int {
	last := from
	for i := from; i < len(s); i++ {
		if needleAt(s, i) {
			last = i
		}
	}
	return last
}

// needleAt reports whether one of the secretNeedles starts at s[i], in
// any case (ASCII only: mayNameSecret and fastSecretScan deal with the
// two non-ASCII letters that fold to ASCII ones).
func needleAt(s string, i int) bool {
	c := s[i]
	if c >= 128 {
		return false
	}
	for _, w := range secretNeedles[c|0x20] {
		if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
