package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRoundTripAndRefusals(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Seal("elicit/v1", []byte(`{"tool":"guest_power"}`))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := s.Open("elicit/v1", tok)
	if err != nil || string(pt) != `{"tool":"guest_power"}` {
		t.Fatalf("Open = %q, %v", pt, err)
	}
	other, _ := New(nil)
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	flipped := bytes.Clone(raw)
	flipped[len(flipped)/2] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"other purpose": func() ([]byte, error) { return s.Open("grant/v1", tok) },
		"other key":     func() ([]byte, error) { return other.Open("elicit/v1", tok) },
		"one bit":       func() ([]byte, error) { return s.Open("elicit/v1", base64.RawURLEncoding.EncodeToString(flipped)) },
		"cut":           func() ([]byte, error) { return s.Open("elicit/v1", tok[:len(tok)-4]) },
		"empty":         func() ([]byte, error) { return s.Open("elicit/v1", "") },
		"not base64":    func() ([]byte, error) { return s.Open("elicit/v1", "!!!") },
		"too long":      func() ([]byte, error) { return s.Open("elicit/v1", string(make([]byte, MaxTokenLen+1))) },
	} {
		if pt, err := open(); !errors.Is(err, ErrInvalid) || pt != nil {
			t.Errorf("%s: Open = %q, %v; want ErrInvalid", name, pt, err)
		}
	}
	if tok2, _ := s.Seal("elicit/v1", []byte(`{"tool":"guest_power"}`)); tok2 == tok {
		t.Error("two seals of the same plaintext are equal: the nonce is not fresh")
	}
}

func TestKeySize(t *testing.T) {
	if _, err := New(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was accepted; AES-256 needs 32")
	}
	a, _ := New(bytes.Repeat([]byte{7}, KeySize))
	b, _ := New(bytes.Repeat([]byte{7}, KeySize))
	tok, _ := a.Seal("p", []byte("x"))
	if pt, err := b.Open("p", tok); err != nil || string(pt) != "x" {
		t.Errorf("a configured key does not open across sealers: %q %v", pt, err)
	}
}

// FuzzOpen: no input makes Open panic or return plaintext together with an
// error, and nothing but a real token opens. The seeds run in plain
// `go test`; `go test -fuzz FuzzOpen ./internal/seal` explores.
func FuzzOpen(f *testing.F) {
	s, _ := New(bytes.Repeat([]byte{1}, KeySize))
	good, _ := s.Seal("elicit/v1", []byte("state"))
	for _, seed := range []string{good, good[:10], good + "A", "", "AAAA", "-_-_", string(make([]byte, 64))} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		pt, err := s.Open("elicit/v1", tok)
		if err != nil {
			if pt != nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Open(%q) = %q, %v", tok, pt, err)
			}
			return
		}
		if string(pt) != "state" {
			t.Fatalf("Open(%q) opened a token this sealer never made: %q", tok, pt)
		}
	})
}

// BenchmarkSealOpen measures one seal and one open of an elicitation-sized
// state: go test -run XXX -bench . ./internal/seal
func BenchmarkSealOpen(b *testing.B) {
	s, _ := New(nil)
	pt := bytes.Repeat([]byte("x"), 300)
	for b.Loop() {
		tok, err := s.Seal("elicit/v1", pt)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Open("elicit/v1", tok); err != nil {
			b.Fatal(err)
		}
	}
}
