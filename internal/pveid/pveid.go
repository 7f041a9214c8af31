// Package pveid checks Proxmox's user, realm and API token identifiers
// (pve-access-control: a user name is [^\s:/]+; a realm and a token name
// are a letter followed by at least one letter, digit, '.', '-' or '_').
//
// The checks are written out rather than matched with regular expressions:
// the binary checks the configured token id on every start, where
// compiling the three patterns cost more than the checks themselves (issue
// 14). The patterns stay as the specification: the tests hold every
// function to its pattern.
package pveid

import "strings"

// Patterns the functions implement (RE2 syntax).
const (
	// UserPattern is a user name without its realm.
	UserPattern = `^[^\s:/]+$`
	// NamePattern is a realm or a token name.
	NamePattern = `^[A-Za-z][A-Za-z0-9.\-_]+$`
	// UserIDPattern is USER@REALM.
	UserIDPattern = `^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+$`
	// TokenIDPattern is USER@REALM!TOKENNAME.
	TokenIDPattern = `^([^\s:/]+)@([A-Za-z][A-Za-z0-9.\-_]+)!([A-Za-z][A-Za-z0-9.\-_]+)$`
)

// ValidUser reports whether s matches [UserPattern]: not empty, and no
// white space (RE2's \s: tab, newline, form feed, carriage return,
// space), ':' or '/'. Bytes of other characters, and invalid UTF-8, are
// allowed, as the pattern allows them.
func ValidUser(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\f', '\r', ' ', ':', '/':
			return false
		}
	}
	return true
}

// ValidName reports whether s matches [NamePattern]: a realm or a token
// name, a letter followed by at least one letter, digit, '.', '-' or '_'.
func ValidName(s string) bool {
	if len(s) < 2 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !('0' <= c && c <= '9') && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// SplitTokenID splits USER@REALM!TOKENNAME as Proxmox does: the token name
// after the last '!', the realm after the last '@' before it (a user name
// may contain '@' and '!'). ok is false when either separator is missing;
// the parts are not checked.
func SplitTokenID(id string) (user, realm, name string, ok bool) {
	i := strings.LastIndexByte(id, '!')
	if i < 0 {
		return "", "", "", false
	}
	j := strings.LastIndexByte(id[:i], '@')
	if j < 0 {
		return "", "", "", false
	}
	return id[:j], id[j+1 : i], id[i+1:], true
}

// ValidTokenID reports whether id matches [TokenIDPattern]. Neither a realm
// nor a token name may hold '@' or '!', so the split of [SplitTokenID] is
// the only one the pattern can match.
func ValidTokenID(id string) bool {
	user, realm, name, ok := SplitTokenID(id)
	return ok && ValidUser(user) && ValidName(realm) && ValidName(name)
}

// ValidUserID reports whether id matches [UserIDPattern]: the realm after
// the last '@' (a realm holds none), the user name before it.
func ValidUserID(id string) bool {
	j := strings.LastIndexByte(id, '@')
	return j >= 0 && ValidUser(id[:j]) && ValidName(id[j+1:])
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
