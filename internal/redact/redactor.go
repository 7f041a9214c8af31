package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"slices"
	"sync"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// minLiteral is the shortest secret redacted by value: real token secrets
// are UUIDs, and replacing a very short string everywhere would mangle the
// JSON it appears in.
const minLiteral = 8

// credentialRe matches the credentials Proxmox clients send, in the forms an
// echoing proxy, WAF or debug page would repeat them: the token header
// ("PVEAPIToken=user@realm!name=SECRET"), the ticket cookie and the CSRF
// token header. The value is the characters these credentials are made of
// (token ids and UUIDs, tickets with their base64 signature, URL-encoded
// cookies, "\/" in JSON), so a match never runs past a quote or a brace and
// a redacted JSON body stays valid JSON.
var credentialRe = lazyre.New(`(?i)(PVEAPIToken\s*[=:]\s*|PVEAuthCookie\s*[=:]\s*|CSRFPreventionToken(?:\\?["'])?\s*[=:]\s*(?:\\?["'])?)(?:[A-Za-z0-9@!:=._~+/%-]|\\/)+`)

// markers are the case-sensitive spellings checked before running the
// regular expression, so a clean body (the usual case) costs one scan per
// marker and no regexp work. Lower-case spellings still lose the secret
// itself through the literal replacement.
var markers = [][]byte{[]byte("PVEAPIToken"), []byte("PVEAuthCookie"), []byte("CSRFPreventionToken"),
	[]byte("pveapitoken"), []byte("pveauthcookie"), []byte("csrfpreventiontoken")}

// mayHoldMarker reports whether b may hold one of the markers: each ends
// in "oken" or "ookie" in either spelling, so a body without such a 'k' holds
// none. That is one scan of b for a byte that is rare in API answers
// instead of a scan for each of the six markers (every body is redacted:
// on a small read those scans were most of the redaction's cost).
// TestMarkersHaveAnchor keeps every marker to this.
func mayHoldMarker(b []byte) bool {
	for from := 0; ; {
		i := bytes.IndexByte(b[from:], 'k')
		if i < 0 {
			return false
		}
		i += from
		if i >= 1 && i+3 <= len(b) && string(b[i-1:i+3]) == "oken" ||
			i >= 2 && i+3 <= len(b) && string(b[i-2:i+3]) == "ookie" {
			return true
		}
		from = i + 1
	}
}

// Redactor removes credentials from text that came from upstream before it
// reaches any caller, log or audit record: the configured secrets by value
// (raw and JSON-escaped) and any token header, ticket cookie or CSRF token
// by pattern. It is the one place upstream text enters: the HTTP client
// (internal/pve) applies it to every body, reason phrase and transport
// error. The zero value
// redacts by pattern only; a nil *Redactor redacts nothing.
type Redactor struct {
	mu       sync.RWMutex
	literals [][]byte
}

// NewRedactor returns a Redactor for the given secrets (empty ones are
// ignored).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add registers one more secret, e.g. a renewed ticket. Secrets shorter
// than 8 bytes are redacted by pattern only. Besides the secret itself,
// the forms an echo repeats it in byte for byte are registered: as Go's
// JSON encoder escapes it, and URL-encoded as a query or form value (the
// login sends the password form-encoded) and as a path segment. Any other
// escaping is caught on the decoded text ([Redactor.Bytes]).
func (r *Redactor) Add(secret string) {
	if r == nil || len(secret) < minLiteral {
		return
	}
	forms := literalForms(secret)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms {
		dup := false
		for _, l := range r.literals {
			dup = dup || bytes.Equal(l, f)
		}
		if !dup {
			r.literals = append(r.literals, f)
		}
	}
}

// Remove stops redacting secret by value (pattern redaction stays), e.g. a
// ticket that expired long ago: literals are checked on every body, so a
// long-running client must not collect one per renewal forever.
func (r *Redactor) Remove(secret string) {
	if r == nil || len(secret) < minLiteral {
		return
	}
	forms := literalForms(secret)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.literals = slices.DeleteFunc(r.literals, func(l []byte) bool {
		return slices.ContainsFunc(forms, func(f []byte) bool { return bytes.Equal(l, f) })
	})
}

// Bytes returns b with every credential replaced. It returns b itself,
// unchanged, when there is nothing to redact.
//
// It looks at b twice: as it is, and as a reader decodes it. Upstream may
// escape a secret other than Go does ("P\u00e4ssw\u00f6rd", "\/", every
// character \u-escaped), which no byte form registered by [Redactor.Add]
// matches, and the JSON decoder then hands the clear secret to whatever
// shows the value. So every run of text between two unescaped quotes
// that holds a backslash (in a JSON body: every string that has an
// escape) is also decoded, redacted and, when that changed it, written
// back re-escaped as JSON (see decodedSegments).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	b = r.raw(b)
	if bytes.IndexByte(b, '\\') >= 0 {
		b = r.decodedSegments(b, maxEscapeDepth)
	}
	return b
}

// raw redacts b as it is: the patterns, then the literals.
func (r *Redactor) raw(b []byte) []byte {
	// Patterns first: a header echo then reads "PVEAPIToken=[redacted]"
	// rather than keeping the token id in front of a redacted secret.
	if mayHoldMarker(b) {
		for _, m := range markers {
			if bytes.Contains(b, m) {
				b = credentialRe.ReplaceAll(b, []byte("${1}"+Value))
				break
			}
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, l := range r.literals {
		if bytes.Contains(b, l) {
			b = replaceLiteral(b, l)
		}
	}
	return b
}

// replaceLiteral replaces every occurrence of l in b by Value, except one
// that starts or ends inside an escape ("\u00e4" holds "00e4", "\n"
// holds "n"): cutting an escape in two would leave a body that no longer
// decodes, and such an occurrence is not what a reader sees. The decoded
// text, which is, is redacted by decodedSegments.
func replaceLiteral(b, l []byte) []byte {
	var out []byte
	copied := 0
	for from := 0; ; {
		i := bytes.Index(b[from:], l)
		if i < 0 {
			break
		}
		i += from
		end := i + len(l)
		if inEscape(b, i) || oddBackslashesBefore(b, end) {
			from = i + 1
			continue
		}
		out = append(out, b[copied:i]...)
		out = append(out, Value...)
		copied, from = end, end
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// inEscape reports whether b[p] continues an escape that starts before
// it: the byte after a backslash, or one of the hex digits of \uXXXX or
// \xHH.
func inEscape(b []byte, p int) bool {
	if oddBackslashesBefore(b, p) {
		return true
	}
	for k := 1; k <= 3 && p-k-2 >= 0; k++ {
		if !isHex(b[p-k]) {
			return false
		}
		at := p - k - 2
		if b[at] == '\\' && (b[at+1] == 'u' || b[at+1] == 'x' && k == 1) && !oddBackslashesBefore(b, at) {
			return true
		}
	}
	return false
}

// oddBackslashesBefore reports whether the run of backslashes ending at
// b[p-1] is odd: b[p] is then escaped.
func oddBackslashesBefore(b []byte, p int) bool {
	n := 0
	for p-n-1 >= 0 && b[p-n-1] == '\\' {
		n++
	}
	return n%2 == 1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// String is Bytes for a string.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	if out := r.Bytes([]byte(s)); string(out) != s {
		return string(out)
	}
	return s
}

// Error returns err unchanged when its text holds no credential, else an
// error with the redacted text that still matches (errors.Is) the context
// errors, os.ErrDeadlineExceeded and each of keep, the conditions callers
// branch on (the original, which would print the secret, is not reachable
// through Unwrap).
func (r *Redactor) Error(err error, keep ...error) error {
	if r == nil || err == nil {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, cause: err, keep: keep}
}

type redactedError struct {
	msg   string
	cause error
	keep  []error
}

func (e *redactedError) Error() string { return e.msg }

// Is keeps errors.Is working for the conditions callers branch on, without
// exposing the unredacted error.
func (e *redactedError) Is(target error) bool {
	switch target {
	case context.Canceled, context.DeadlineExceeded, os.ErrDeadlineExceeded:
		return errors.Is(e.cause, target)
	}
	return slices.Contains(e.keep, target) && errors.Is(e.cause, target)
}

// literalForms are the byte forms of secret Add registers, without
// repeats: the secret, Go's JSON escaping of it, its query (form) and its
// path escaping.
func literalForms(secret string) [][]byte {
	esc, _ := json.Marshal(secret)
	var forms [][]byte
	for _, f := range []string{secret, string(esc[1 : len(esc)-1]), url.QueryEscape(secret), url.PathEscape(secret)} {
		if !slices.ContainsFunc(forms, func(have []byte) bool { return string(have) == f }) {
			forms = append(forms, []byte(f))
		}
	}
	return forms
}
