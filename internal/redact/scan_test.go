package redact

import (
	"strings"
	"testing"
)

// secretArgsPlain is SecretArgs as it was written before the
// candidate scan: both expressions over the whole text, unanchored.
func secretArgsPlain(s string) string {
	s = secretShapes(s)
	if !mayNameSecret(s) {
		return s
	}
	s = secretFlagArgs.re.ReplaceAllString(s, "${1}"+Value)
	return secretPairArgs.re.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, Value) {
			return m
		}
		return secretPairArgs.re.ReplaceAllString(m, "${1}"+Value)
	})
}

// secretArgsSamples are texts where the candidate scan could go wrong: a
// match starting inside a run (after "-", after the end of the previous
// match), "\b" right after a previous match, look-alikes, quotes that
// span lines or never close, case folding, non-ASCII around and inside.
var secretArgsSamples = []string{
	"",
	"nothing here",
	"--password hunter2 --other x",
	"x--password=hunter2",
	"qm set 100 --cipassword 'a b' --sshkeys ssh-rsa%20AAAA",
	`{"password":"dragon","user":"root"}`,
	`'api_token': 'x', "Token" : "y z"`,
	"DB_PASS=x PASS=y bypass=z passthrough=1 passive: 2 compass=3",
	"password=\"a\"pass=b",
	"password=\"a\"bypass=b",
	"token: \"line one\nline two\" and more",
	"secret: \"never closed\nkey: x",
	"psk=abc\npwd: def\notp 123 api-key: k apikey=k2 X-API-Key: k3",
	"private_key=a private-key=b privkey=c client_key=d encryption-key=e keyring: f",
	"PaSsWoRd=MiXeD tOkEn:x",
	"ſecret=x PAſS=y",     // folds to secret, pass
	"api_\u212aey=kelvin", // Kelvin sign folds to k
	"héllo password=ünïcode naïve token: ✓",
	"\xffpassword=\xfe invalid utf-8",
	"--pass\n\nvalue",
	"pass=",
	"pass",
	"-pass x",
	"a-b-c-d-pass-e=1",
	"__pass__=1 --__token x",
	"keykeykeykey=1",
	strings.Repeat("a", 300) + "password=long-run",
	strings.Repeat("x-", 200) + "token: y",
	strings.Repeat("password=a ", 50),
	"Nov 30 pvedaemon[1]: <root@pam> update VM 100: -ciuser root -cipassword hunter2 -sshkeys x",
	"mysqldump -u root -pS3cr3t db; sshpass -p 'a b' ssh x; curl -u u:p https://u:p@h/ --password z",
}

func TestSecretArgsMatchesReplaceAll(t *testing.T) {
	for _, s := range secretArgsSamples {
		if got, want := SecretArgs(s), secretArgsPlain(s); got != want {
			t.Errorf("SecretArgs(%q)\n got  %q\n want %q (the expressions over the whole text)", s, got, want)
		}
	}
}

func FuzzSecretArgs(f *testing.F) {
	for _, s := range secretArgsSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SecretArgs(s), secretArgsPlain(s); got != want {
			t.Errorf("SecretArgs(%q)\n got  %q\n want %q", s, got, want)
		}
	})
}

// logWithNeedles is a 1 MB log-like text that holds a needle ("key") on
// every line and no secret.
func logWithNeedles() string {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("Nov 30 12:00:01 pve1 pvedaemon[1234]: <root@pam> starting task UPID:pve1:0000:vzdump:100:root@pam: key rotation done\n")
	}
	return sb.String()
}

// go test -run '^$' -bench 'SecretArgs' ./internal/redact
func BenchmarkSecretArgs1MB(b *testing.B) {
	s := logWithNeedles()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = SecretArgs(s)
	}
}

// BenchmarkSecretArgsPlain1MB is the same text through the
// expressions over the whole text, as before the candidate scan.
func BenchmarkSecretArgsPlain1MB(b *testing.B) {
	s := logWithNeedles()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = secretArgsPlain(s)
	}
}
