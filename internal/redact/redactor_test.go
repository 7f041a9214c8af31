package redact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	t.Parallel()
	const secret = "0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e"
	r := NewRedactor(secret, "short")
	cases := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"Authorization: PVEAPIToken=a@pve!b=" + secret, "Authorization: PVEAPIToken=[redacted]"},
		{"pveapitoken=a@pve!b=xyz, next", "pveapitoken=[redacted], next"},
		{"bare " + secret + " value", "bare [redacted] value"},
		{"Cookie: PVEAuthCookie=PVE%3Aroot%40pam%3A4EEC61E2%3A%3Asig%2B%2F%3D; other=1", "Cookie: PVEAuthCookie=[redacted]; other=1"},
		{"CSRFPreventionToken: 4EEC61E2:yd1W+v7s/QqKA", "CSRFPreventionToken: [redacted]"},
		{"the word short stays", "the word short stays"},
	}
	for _, tc := range cases {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRedactorKeepsJSONValid: a redacted body must still decode, whatever
// the echoed header looks like, empty values included.
func TestRedactorKeepsJSONValid(t *testing.T) {
	t.Parallel()
	const secret = "0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e"
	r := NewRedactor(secret, `we"ird\secret-value`)
	for _, echoed := range []string{
		"Authorization: PVEAPIToken=a@pve!b=" + secret,
		"CSRFPreventionToken: ",
		`CSRFPreventionToken":"4EEC61E2:abc/def"`,
		"PVEAuthCookie=PVE:root@pam:4EEC61E2::a/b+c=",
		`we"ird\secret-value`,
		"PVEAPIToken=",
	} {
		body, _ := json.Marshal(map[string]any{"data": map[string]string{"t": echoed, "u": "after"}})
		out := r.Bytes(body)
		var v struct {
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("echo %q: redacted body %s no longer decodes: %v", echoed, out, err)
			continue
		}
		if v.Data["u"] != "after" {
			t.Errorf("echo %q: redaction ran past its value: %s", echoed, out)
		}
		if strings.Contains(string(out), secret) || strings.Contains(v.Data["t"], `we"ird`) {
			t.Errorf("echo %q: secret survived: %s", echoed, out)
		}
	}
}

func TestRedactorError(t *testing.T) {
	t.Parallel()
	const secret = "0b1d4e55-9a3b-2c4d-5e6f-7a8b7f3a9c1e"
	r := NewRedactor(secret)
	err := r.Error(fmt.Errorf("malformed HTTP response %q: %w", "PVEAPIToken=x="+secret, context.DeadlineExceeded))
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error keeps the secret: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("redacted error no longer matches context.DeadlineExceeded")
	}
	errTooLarge := errors.New("too large")
	kept := r.Error(fmt.Errorf("echo %q: %w", "PVEAPIToken=x="+secret, errTooLarge), errTooLarge)
	if strings.Contains(kept.Error(), secret) || !errors.Is(kept, errTooLarge) {
		t.Errorf("kept error = %v: want it redacted and matching the kept condition", kept)
	}
	if errors.Is(r.Error(fmt.Errorf("echo %q: %w", "PVEAPIToken=x="+secret, errTooLarge)), errTooLarge) {
		t.Error("a condition not kept must not match through the redacted error")
	}
	if errors.Is(kept, context.Canceled) {
		t.Error("the redacted error matches a condition its cause does not")
	}
	plain := errors.New("connection refused")
	if r.Error(plain) != plain {
		t.Error("an error without a secret should be returned as is")
	}
	var nilR *Redactor
	if nilR.String("PVEAPIToken=x") != "PVEAPIToken=x" {
		t.Error("a nil Redactor must redact nothing")
	}
}

// TestRedactorRemove: Remove drops both forms of a literal and keeps the
// others.
func TestRedactorRemove(t *testing.T) {
	t.Parallel()
	r := NewRedactor(`keep-this-one`, `drop"this-one`)
	r.Remove(`drop"this-one`)
	if got := r.String(`keep-this-one drop"this-one drop\"this-one`); got != `[redacted] drop"this-one drop\"this-one` {
		t.Errorf("got %q", got)
	}
}

// TestMarkersHaveAnchor: raw looks for the markers only in a body
// mayHoldMarker lets through, so every marker, wherever it stands and
// after however many other 'k's, must be let through; a body without one
// (an ordinary answer) is not.
func TestMarkersHaveAnchor(t *testing.T) {
	for _, m := range markers {
		for _, b := range []string{string(m), "back kk ok" + string(m) + "=x", "{\"k\":\"" + string(m)} {
			if !mayHoldMarker([]byte(b)) {
				t.Errorf("mayHoldMarker(%q) = false: Bytes would leave its credential", b)
			}
		}
	}
	for _, b := range []string{"", "k", "oke", "ookiE", `{"data":{"backup":"blockstat","masterkey":true,"token":null}}`} {
		if mayHoldMarker([]byte(b)) != strings.Contains(b, "oken") {
			t.Errorf("mayHoldMarker(%q) = %v", b, mayHoldMarker([]byte(b)))
		}
	}
}
