// Package seal encrypts and authenticates small opaque tokens (AES-256-GCM
// from the standard library) that the server hands to a client and must
// get back unchanged: the request state of an MCP elicitation. A token
// that was altered, cut, or sealed under another key or purpose does not
// open.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// KeySize is the length of a key in bytes (AES-256).
const KeySize = 32

// MaxTokenLen bounds the tokens Open looks at; a longer one is refused
// before it is decoded.
const MaxTokenLen = 8192

// ErrInvalid is what Open returns for any token it cannot open. It says
// nothing about why: the token is simply not one this sealer made.
var ErrInvalid = errors.New("sealed token is invalid: altered, expired key, or not issued by this server")

// A Sealer seals and opens tokens under one key. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// New returns a Sealer for key, which must be [KeySize] bytes. A nil key
// means a fresh random key: tokens then open only in this process.
func New(key []byte) (*Sealer, error) {
	if key == nil {
		key = make([]byte, KeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("seal: generating a key: %w", err)
		}
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: the key must be %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext bound to purpose (authenticated, not secret;
// e.g. "elicit/v1") and returns a URL-safe token.
func (s *Sealer) Seal(purpose string, plaintext []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, plaintext, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the plaintext of a token Seal made under the same key and
// purpose, or [ErrInvalid].
func (s *Sealer) Open(purpose, token string) ([]byte, error) {
	if len(token) == 0 || len(token) > MaxTokenLen {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return nil, ErrInvalid
	}
	n := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return nil, ErrInvalid
	}
	return pt, nil
}
