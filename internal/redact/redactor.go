package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// than 8 bytes are redacted by pattern only.
func (r *Redactor) Add(secret string) {
	if r == nil || len(secret) < minLiteral {
		return
	}
	esc, _ := json.Marshal(secret)
	forms := [][]byte{[]byte(secret)}
	if e := esc[1 : len(esc)-1]; !bytes.Equal(e, []byte(secret)) {
		forms = append(forms, e)
	}
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
	esc, _ := json.Marshal(secret)
	forms := [][]byte{[]byte(secret), esc[1 : len(esc)-1]}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.literals = slices.DeleteFunc(r.literals, func(l []byte) bool {
		return bytes.Equal(l, forms[0]) || bytes.Equal(l, forms[1])
	})
}

// Bytes returns b with every credential replaced. It returns b itself,
// unchanged, when there is nothing to redact.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	// Patterns first: a header echo then reads "PVEAPIToken=[redacted]"
	// rather than keeping the token id in front of a redacted secret.
	for _, m := range markers {
		if bytes.Contains(b, m) {
			b = credentialRe.ReplaceAll(b, []byte("${1}"+Value))
			break
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, l := range r.literals {
		if bytes.Contains(b, l) {
			b = bytes.ReplaceAll(b, l, []byte(Value))
		}
	}
	return b
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
