package redact

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSecretName: the one list names a secret by an infix anywhere, or by
// a whole segment (split on "-" and "_") or two adjacent ones, in any
// case; a word that merely contains a segment word does not.
func TestSecretName(t *testing.T) {
	t.Parallel()
	for _, k := range []string{
		"password", "cipassword", "bind_password", "passwd", "client_secret", "token", "tokenid",
		"pass", "PASS", "db_pass", "db-pass", "pass-file", "x__pass", "pwd", "user_pwd", "psk", "wifi-psk",
		"passphrase", "otp", "api_key", "api-key", "apikey", "API_KEY", "apiKey", "x-api-key", "api_key_id",
		"access_key", "accesskey", "private_key", "private-key", "privatekey", "privkey", "ssl-privkey",
		"client_key", "encryption_key", "keyring", "ceph_keyring",
	} {
		if !SecretName(k) {
			t.Errorf("SecretName(%q) = false, want true", k)
		}
	}
	for _, k := range []string{
		"bypass", "passthrough", "passive", "compass", "by_passer", "pwdx", "apiary", "key", "keyboard",
		"keephugepages", "ssh-public-keys", "public-key", "api", "access", "private", "description", "otpx", "lotp",
	} {
		if SecretName(k) {
			t.Errorf("SecretName(%q) = true, want false", k)
		}
	}
}

// TestSecretWordsShape: every word of the list is lower-case letters, at
// most two segments joined by "_" (secretSegmentPairs holds pairs), and
// holds one of secretNeedles, which mayNameSecret needs to be sound.
func TestSecretWordsShape(t *testing.T) {
	t.Parallel()
	word := regexp.MustCompile(`^[a-z]+(_[a-z]+)?$`)
	for _, w := range slices.Concat(secretInfixes, secretSegments) {
		if !word.MatchString(w) {
			t.Errorf("%q: want lower-case letters, at most one _", w)
		}
		if !mayNameSecret(w) || !mayNameSecret(strings.ToUpper(strings.ReplaceAll(w, "_", "-"))) {
			t.Errorf("%q holds none of the needles %v", w, secretNeedles)
		}
	}
	if mayNameSecret("guest db1 started on pve1 after 3s") {
		t.Error("mayNameSecret matched text with no needle")
	}
}

// TestSecretArgsSegments: free text is redacted by the same list as
// names: a secret's name as a whole segment before "=", ":" or a flag's
// space; look-alikes ("bypass", "passthrough", "passive") and prose are
// left alone.
func TestSecretArgsSegments(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"DB_PASS=dragon run":            "DB_PASS=[redacted] run",
		"--pass dragon --user x":        "--pass [redacted] --user x",
		"--db-pass=dragon":              "--db-pass=[redacted]",
		"pwd: dragon":                   "pwd: [redacted]",
		"wpa psk=wifi2026":              "wpa psk=[redacted]",
		"-H 'x-api-key: k3y'":           "-H 'x-api-key: [redacted]", // the value runs to the next space
		"apiKey=k3y":                    "apiKey=[redacted]",
		"access_key=AKIA private-key=X": "access_key=[redacted] private-key=[redacted]",
		`{"passphrase":"horse"}`:        `{"passphrase":[redacted]}`,
		"otp: 123456":                   "otp: [redacted]",
		"--keyring /etc/ceph/x.keyring": "--keyring [redacted]",
		"keyring: /etc/ceph/x.keyring":  "keyring: [redacted]",
		"bypass=1 passthrough: on":      "bypass=1 passthrough: on",
		"passive: yes, compass: north":  "passive: yes, compass: north",
		"the pwd command; sort key: x":  "the pwd command; sort key: x",
		"a pass for you":                "a pass for you",
		"invalid password":              "invalid password",
	} {
		if got := SecretArgs(in); got != want {
			t.Errorf("SecretArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
