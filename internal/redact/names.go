package redact

import (
	"strings"
	"unicode/utf8"
)

// Value replaces whatever is redacted: a value under a secret's name, a
// secret argument in free text, a credential in upstream text.
const Value = "[redacted]"

// The one list of words that name a secret (docs/SECURITY.md, "Secret
// names"). It serves both sides: names (config keys, gateway answer
// members and gateway write parameters, [SecretName]) and free text that
// quotes command lines or settings (task logs and every string of a
// gateway answer, [SecretArgs]). A word added here is redacted and
// refused everywhere at once.
var (
	// secretInfixes name a secret wherever they stand in a name:
	// "cipassword", "bind_password", "client_secret", "tokenid".
	secretInfixes = []string{"password", "passwd", "secret", "token"}
	// secretSegments name a secret only as a whole segment of a name
	// (segments are split on "-" and "_"), so that "pass" catches "pass",
	// "db_pass" and "pass-file" but not "bypass", "passthrough" or
	// "passive". A "_" inside a word joins two segments that may also be
	// written together or with "-": "api_key" is "api_key", "api-key",
	// "apikey" and "x-api-key".
	secretSegments = []string{
		"pass", "pwd", "passphrase", "psk", "otp",
		"api_key", "access_key", "private_key", "privkey", "client_key", "encryption_key", "keyring",
	}
)

// secretSegmentSet holds the secretSegments as single segments ("pass",
// "apikey") and secretSegmentPairs the ones written as two ("api", "key"),
// so that SecretName looks names up without allocating.
var secretSegmentSet, secretSegmentPairs = func() (map[string]bool, map[[2]string]bool) {
	set, pairs := map[string]bool{}, map[[2]string]bool{}
	for _, w := range secretSegments {
		a, b, two := strings.Cut(w, "_")
		set[a+b] = true
		if two {
			pairs[[2]string{a, b}] = true
		}
	}
	return set, pairs
}()

// SecretName reports whether a name (a config key, a member of an
// answer, a write parameter) names a secret by the list above: it
// contains a secretInfixes word, or a segment, or two adjacent segments,
// spell a secretSegments word. Case is ignored.
func SecretName(name string) bool {
	k := strings.ToLower(name)
	for _, w := range secretInfixes {
		if strings.Contains(k, w) {
			return true
		}
	}
	prev := ""
	for rest := k; rest != ""; {
		var seg string
		if i := strings.IndexAny(rest, "-_"); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			seg, rest = rest, ""
		}
		if seg == "" {
			continue // "a__b": one separator for this purpose
		}
		if secretSegmentSet[seg] || secretSegmentPairs[[2]string{prev, seg}] {
			return true
		}
		prev = seg
	}
	return false
}

// secretTextName is the part of the free-text expressions that matches
// a name naming a secret, built from the same list as SecretName: an
// infix anywhere in a run of name characters, or a segment word between
// segment boundaries ("\b" before the name, so "bypass" does not match
// at "pass"; "-" or "_" and more name characters after it, so
// "passthrough" does not match either). Building the pattern is string
// work at start; it is compiled on first use (lazyre).
var secretTextName = func() string {
	segs := make([]string, len(secretSegments))
	for i, w := range secretSegments {
		segs[i] = strings.ReplaceAll(w, "_", "[-_]?")
	}
	return `(?:[a-z0-9_-]*(?:` + strings.Join(secretInfixes, "|") + `)[a-z0-9_-]*` +
		`|\b(?:[a-z0-9]*[-_])*(?:` + strings.Join(segs, "|") + `)(?:[-_][a-z0-9]+)*)`
}()

// Secret-looking arguments in free text. Task logs quote command lines (a
// vzdump or qm task log starts with the command it ran); these catch the
// common spellings ("--password x", "--cipassword=x", "token: x", JSON's
// "password":"x", "DB_PASS=x"), not every possible one (a name glued to
// other letters, "dbpass=x", passes). Plain prose ("invalid password") is
// left alone.
var (
	secretFlagArgs = newSecretArgs(`(?i)(--?` + secretTextName + `(?:\s+|=))("[^"]*"|'[^']*'|\S+)`)
	secretPairArgs = newSecretArgs(`(?i)(` + secretTextName + `["']?\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)`)
)

// SecretArgs replaces the values of secret-looking arguments
// (--password X, api_token=X, password: X, psk=X) by [Value], and the
// secrets of a few shapes without a name (secretShapes: mysql -pX,
// sshpass -p X, curl -u user:X, a URL's user:X@): task logs and other
// free text quote command lines, which Proxmox does not mask.
// Text without one is returned as it is.
func SecretArgs(s string) string {
	s = secretShapes(s)
	if !mayNameSecret(s) {
		return s
	}
	s = secretFlagArgs.replaceAll(s, func(s string, loc []int) string {
		return s[loc[2]:loc[3]] + Value
	})
	return secretPairArgs.replaceAll(s, func(s string, loc []int) string {
		m := s[loc[0]:loc[1]]
		if strings.HasSuffix(m, Value) {
			return m
		}
		// What running the expression on m again would give (the match
		// spans m), without the second run.
		return s[loc[2]:loc[3]] + Value
	})
}

// secretNeedles holds, by lower-case first letter, words at least one of
// which every match of secretFlagArgs and secretPairArgs contains: the
// infixes and the last segment of each segment word, less any that
// contains a shorter one ("password" holds "pass", "keyring" "key").
var secretNeedles = func() (out [128][]string) {
	var words []string
	for _, w := range secretInfixes {
		words = append(words, w)
	}
	for _, w := range secretSegments {
		words = append(words, w[strings.LastIndex(w, "_")+1:])
	}
next:
	for _, w := range words {
		for _, o := range words {
			if o != w && strings.Contains(w, o) {
				continue next
			}
		}
		for _, have := range out[w[0]] {
			if have == w {
				continue next
			}
		}
		out[w[0]] = append(out[w[0]], w)
	}
	return out
}()

// mayNameSecret reports whether s contains, in any case, one of the
// secretNeedles ("pass", "secret", "token", "key", "pwd", …), or
// non-ASCII text, which the expressions' case folding may match: most
// text has none, and the check costs a fraction of the expressions (the
// gateway runs it on every string of an answer).
func mayNameSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return true // (?i) also folds ſ to s and K (Kelvin) to k
		}
		// The index first: most bytes start no needle, and the call
		// would halve the scan's speed.
		if secretNeedles[c|0x20] != nil && needleAt(s, i) {
			return true
		}
	}
	return false
}
