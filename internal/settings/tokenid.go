package settings

import (
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pveid"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// Checking PVE_API_TOKEN_ID before the library does, to say precisely what
// is wrong (the library's message cannot name the setting). Proxmox shows a new token as the header value
// "PVEAPIToken=user@realm!name=SECRET", and users paste all of it into
// PVE_API_TOKEN_ID: the message must recognise that and never repeat the
// secret. The rules are Proxmox's (pve-access-control): user
// [^\s:/]+, realm and token name a letter followed by at least one letter,
// digit, '.', '-' or '_' (internal/pveid, which the library checks with
// too).

const tokenIDSetting = "PVE_API_TOKEN_ID (--token-id)"

// checkTokenID returns a configuration error for a malformed token id, nil
// for a good one. The message quotes the value only when it cannot hold a
// secret.
func checkTokenID(id string) error {
	if rest, ok := cutPastedHeader(id); ok {
		msg := tokenIDSetting + " holds the whole value Proxmox shows for a token, PVEAPIToken=USER@REALM!TOKENNAME=SECRET, secret included (value not shown). Split it:"
		if name, _, found := strings.Cut(rest, "="); found && checkTokenParts(name) == "" {
			msg += " PVE_API_TOKEN_ID=" + name + ","
		} else {
			msg += " PVE_API_TOKEN_ID=USER@REALM!TOKENNAME,"
		}
		return Errorf("%s and the part after the last '=' goes into PVE_API_TOKEN_SECRET_FILE (or PVE_API_TOKEN_SECRET)", msg)
	}
	if problem := checkTokenParts(id); problem != "" {
		return Errorf("%s %s: %s", tokenIDSetting, sanitize.Quote(id), problem)
	}
	return nil
}

// cutPastedHeader recognises a pasted "PVEAPIToken=…" or "user@realm!name=…"
// and returns what follows the "PVEAPIToken=" prefix.
func cutPastedHeader(id string) (string, bool) {
	if rest, ok := strings.CutPrefix(id, "PVEAPIToken="); ok {
		return rest, true
	}
	if rest, ok := strings.CutPrefix(id, "Authorization: PVEAPIToken="); ok {
		return rest, true
	}
	// No part of a token id may contain '=': what follows one is most
	// likely the secret.
	return id, strings.Contains(id, "=")
}

// checkTokenParts says what breaks Proxmox's rules in user@realm!name, or
// "" when nothing does. id holds no '=' (cutPastedHeader ran first), so it
// may be quoted.
func checkTokenParts(id string) string {
	// Split as Proxmox does: the token name after the last '!', the realm
	// after the last '@' before it (a user name may contain '@').
	user, realm, name, ok := pveid.SplitTokenID(id)
	switch {
	case !strings.Contains(id, "!"):
		return "must be USER@REALM!TOKENNAME, e.g. automation@pve!mcp (no '!' before the token name)"
	case !ok:
		return "must be USER@REALM!TOKENNAME, e.g. automation@pve!mcp (no '@' between user and realm)"
	}
	part := "must be a letter followed by at least one more letter, digit, '.', '-' or '_'"
	switch {
	case !pveid.ValidUser(user):
		return "the user name must not be empty nor contain white space, ':' or '/'"
	case !pveid.ValidName(realm):
		return "the realm " + quote(realm) + " " + part + " (2 characters or more), e.g. pve or pam"
	case !pveid.ValidName(name):
		return "the token name " + quote(name) + " " + part + " (2 characters or more), e.g. mcp"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }
