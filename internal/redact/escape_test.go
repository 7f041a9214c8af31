package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeEvery writes every rune of s as JSON's \u escape (surrogate pairs
// beyond the BMP), the way some JSON encoders write non-ASCII text and a
// hostile echo may write anything.
func escapeEvery(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	return b.String()
}

// TestRedactorDecodedText: a configured secret escaped in any way JSON
// allows (and Go's encoder does not use) is redacted in the decoded text,
// the body stays valid JSON, and what is around the secret survives.
func TestRedactorDecodedText(t *testing.T) {
	t.Parallel()
	const pw = "Pässwörd<&>/x\"y"
	const token = "0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e"
	r := NewRedactor(pw, token)
	for name, enc := range map[string]string{
		"non-ASCII as \\u":        `P\u00e4ssw\u00f6rd<&>/x\"y`,
		"upper-case hex":          `P\u00E4ssw\u00F6rd<&>/x\"y`,
		"<>& unescaped, / as \\/": `Pässwörd<&>\/x\"y`,
		"<>& as \\u":              `Pässwörd\u003c\u0026\u003e/x\"y`,
		"quote as \\u0022":        `Pässwörd<&>/x\u0022y`,
		"every character":         escapeEvery(pw),
	} {
		body := `{"data":{"message":"login as root with ` + enc + ` failed","n":1}}`
		if !json.Valid([]byte(body)) {
			t.Fatalf("%s: test body is not JSON: %s", name, body)
		}
		out := r.Bytes([]byte(body))
		var v struct {
			Data struct {
				Message string `json:"message"`
				N       int    `json:"n"`
			} `json:"data"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("%s: redacted body %s does not decode: %v", name, out, err)
			continue
		}
		if v.Data.Message != "login as root with "+Value+" failed" || v.Data.N != 1 {
			t.Errorf("%s: decoded %+v from %s, want the password redacted and the rest kept", name, v.Data, out)
		}
	}
	for name, enc := range map[string]string{
		"token, every character": escapeEvery(token),
		"token, one character":   strings.Replace(token, "9a3b", `9\u0061\u0033b`, 1),
		"token header":           `PVEAPIToken\u003dautomation@pve!mcp=` + token,
		"header name escaped":    `\u0050VEAPIToken=x@pve!y=zzz-secret-zzz`,
		"ticket cookie":          `PVEAuthCookie\u003dPVE:root@pam:4EEC61E2::c2ln`,
	} {
		body := `{"data":"` + enc + `"}`
		out := r.String(body)
		var v struct{ Data string }
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s: %s does not decode: %v", name, out, err)
			continue
		}
		if strings.Contains(v.Data, token) || strings.Contains(v.Data, "secret") || strings.Contains(v.Data, "c2ln") || !strings.Contains(v.Data, Value) {
			t.Errorf("%s: decoded %q, want the credential redacted", name, v.Data)
		}
	}
}

// TestRedactorDecodedLayers: JSON quoted in a JSON string, and Go's %q
// of an answer, hide nothing either; text without a secret is returned
// as it is, escapes and all.
func TestRedactorDecodedLayers(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-Pässwörd"
	r := NewRedactor(pw)
	inner, _ := json.Marshal(map[string]string{"msg": "pw " + escapeEvery(pw)})
	outer, _ := json.Marshal(map[string]string{"data": string(inner)})
	out := r.Bytes(outer)
	var v struct{ Data string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	var w struct{ Msg string }
	if err := json.Unmarshal([]byte(v.Data), &w); err != nil {
		t.Fatalf("inner %q: %v", v.Data, err)
	}
	if strings.Contains(unescapeAll(string(out)), "Pässwörd") || w.Msg != "pw "+Value {
		t.Errorf("two layers: got %s", out)
	}
	goq := fmt.Sprintf("malformed HTTP response %q", `{"e":"`+escapeEvery(pw)+`"}`)
	if got := r.String(goq); strings.Contains(unescapeAll(got), "Pässwörd") || !strings.Contains(got, Value) {
		t.Errorf("Go-quoted: %q", got)
	}
	for _, clean := range []string{
		`{"data":"line one\nline two \u00e4 \/ \"q\""}`,
		`C:\Users\x "a\"b"`,
		`trailing \`,
		`\u12`,
	} {
		if got := r.String(clean); got != clean {
			t.Errorf("String(%q) = %q, want it unchanged", clean, got)
		}
	}
}

// unescapeAll decodes up to three layers of escapes, as a persistent
// reader would.
func unescapeAll(s string) string {
	for range 3 {
		s = string(unescape([]byte(s)))
	}
	return s
}

// FuzzRedactorEscaping: however each character of a secret is written
// in a JSON string (raw, \u with either case of hex, a short escape), the
// decoded body does not hold the secret and stays valid JSON.
func FuzzRedactorEscaping(f *testing.F) {
	f.Add("Pässwörd<&>/x", uint64(0), "before ", " after")
	f.Add("0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e", ^uint64(0), "", "")
	f.Add(`q"uo\te/d-😀-secret`, uint64(0x5555), `{"x":1}`, `\n`)
	f.Fuzz(func(t *testing.T, secret string, mode uint64, before, after string) {
		if len(secret) < minLiteral || !utf8.ValidString(secret) || !utf8.ValidString(before) || !utf8.ValidString(after) {
			return
		}
		r := NewRedactor(secret)
		var enc strings.Builder
		for i, c := range secret {
			switch (mode >> (2 * (uint(i) % 32))) & 3 {
			case 0:
				b, _ := json.Marshal(string(c))
				enc.Write(b[1 : len(b)-1])
			case 1:
				enc.WriteString(escapeEvery(string(c)))
			case 2:
				enc.WriteString(strings.ToLower(escapeEvery(string(c))))
			case 3:
				if c == '/' || c == '"' || c == '\\' {
					enc.WriteString(`\` + string(c))
				} else {
					b, _ := json.Marshal(string(c))
					enc.Write(b[1 : len(b)-1])
				}
			}
		}
		pre, _ := json.Marshal(before)
		post, _ := json.Marshal(after)
		body := `{"data":["` + string(pre[1:len(pre)-1]) + enc.String() + string(post[1:len(post)-1]) + `"]}`
		out := r.Bytes([]byte(body))
		var v struct{ Data []string }
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("body %s redacted to %s: no longer decodes: %v", body, out, err)
		}
		if len(v.Data) != 1 || strings.Contains(v.Data[0], secret) {
			t.Fatalf("body %s redacted to %s: decodes to %q, holding the secret", body, out, v.Data)
		}
	})
}

// escapedBody is a 1 MB answer whose every string has an escape (a
// task log whose lines end in "\/" paths and non-ASCII as \u), the worst
// case of the decoded pass, and no secret.
func escapedBody() []byte {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for n := 1; b.Len() < 1<<20; n++ {
		fmt.Fprintf(&b, `{"n":%d,"t":"INFO: backup of \/var\/lib\/vz: gr\u00f6\u00dfe 12 GiB"},`, n)
	}
	b.WriteString(`{"n":0,"t":""}]}`)
	return []byte(b.String())
}

// go test -run '^$' -bench 'RedactorBytes' ./internal/redact
func BenchmarkRedactorBytesEscaped1MB(b *testing.B) {
	r := NewRedactor("0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e", "Pässwörd-long")
	body := escapedBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = r.Bytes(body)
	}
}

// BenchmarkRedactorBytesRawOnly1MB is the same body through the raw
// pass alone, as before the decoded pass.
func BenchmarkRedactorBytesRawOnly1MB(b *testing.B) {
	r := NewRedactor("0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e", "Pässwörd-long")
	body := escapedBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = r.raw(body)
	}
}
