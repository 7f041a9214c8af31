package mcphttp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// MinStaticTokenLength is the shortest token [StaticTokenVerifier] accepts.
// A shared secret that protects a Proxmox cluster should be random and long
// (openssl rand -hex 32 gives 64 characters); anything shorter than this is
// more likely a placeholder or a password than a generated token.
const MinStaticTokenLength = 32

// staticExpiry is the expiration reported for static tokens. They have
// none; a far-future time satisfies [auth.RequireBearerToken], which
// otherwise refuses tokens without one, without callers having to set
// AllowMissingExpiration for every other verifier too.
var staticExpiry = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// StaticTokenVerifier returns a [auth.TokenVerifier] that accepts exactly
// the given tokens. tokens maps an identity (reported as
// [auth.TokenInfo.UserID], so go-sdk binds each session to it) to its
// token. Each token must be at least [MinStaticTokenLength] characters of
// the RFC 6750 token alphabet (letters, digits and -._~+/ with trailing
// '='), and no two identities may share one.
//
// The comparison takes the same time whichever token, if any, matches: the
// presented token and every configured one are hashed with SHA-256 and all
// digests are compared with [subtle.ConstantTimeCompare], so neither
// content nor length leaks through timing.
func StaticTokenVerifier(tokens map[string]string) (auth.TokenVerifier, error) {
	if len(tokens) == 0 {
		return nil, errors.New("mcphttp: StaticTokenVerifier needs at least one token")
	}
	type entry struct {
		user   string
		digest [sha256.Size]byte
	}
	entries := make([]entry, 0, len(tokens))
	seen := map[[sha256.Size]byte]string{}
	for user, tok := range tokens {
		if user == "" {
			return nil, errors.New("mcphttp: StaticTokenVerifier: empty identity")
		}
		if err := CheckStaticToken(tok); err != nil {
			return nil, fmt.Errorf("mcphttp: token of %q: %w", user, err)
		}
		d := sha256.Sum256([]byte(tok))
		if other, dup := seen[d]; dup {
			return nil, fmt.Errorf("mcphttp: %q and %q have the same token", other, user)
		}
		seen[d] = user
		entries = append(entries, entry{user, d})
	}
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		d := sha256.Sum256([]byte(token))
		match := -1
		for i := range entries {
			if subtle.ConstantTimeCompare(d[:], entries[i].digest[:]) == 1 {
				match = i // no early exit: every entry is compared
			}
		}
		if match < 0 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: entries[match].user, Expiration: staticExpiry}, nil
	}, nil
}

// CheckStaticToken reports why tok is unfit for [StaticTokenVerifier]; the
// error never contains the token.
func CheckStaticToken(tok string) error {
	if len(tok) < MinStaticTokenLength {
		return fmt.Errorf("the token is %d characters long; use at least %d random ones (e.g. openssl rand -hex 32)", len(tok), MinStaticTokenLength)
	}
	end := len(tok)
	for end > 0 && tok[end-1] == '=' {
		end--
	}
	for i := 0; i < end; i++ {
		c := tok[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
		if !ok {
			return fmt.Errorf("the token has a character at position %d that a bearer token cannot carry (allowed: letters, digits, -._~+/ and trailing =)", i+1)
		}
	}
	if end == 0 {
		return errors.New("the token consists only of '='")
	}
	return nil
}
