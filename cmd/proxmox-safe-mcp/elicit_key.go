package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
)

// The elicitation key seals the request state an MCP client echoes back
// when it answers an elicitation (level elicit). Kept in a file, it
// survives a restart, so an elicitation pending across one can still be
// answered; without one the server makes a random key at every start.
//
// The file holds exactly 32 random bytes as 64 hex digits (one trailing
// newline allowed), e.g. `openssl rand -hex 32`. It must be a regular
// file owned by the user running the server (whoever can replace it can
// forge the state of an elicitation), unless it comes from systemd's
// credentials directory, which systemd owns. Its mode follows the rule
// of every secret and key file (internal/settings, secretfile.go): write access
// by group or others is refused, read access draws a warning at start. A missing file is created
// (0600) at the first start that needs it; a file that breaks a rule is
// refused at start, never used.

// elicitKeyBytes is the key's size: AES-256.
const elicitKeyBytes = 32

// loadElicitKey reads the key file, creating it when it is missing and
// create is set. created reports a new key. credentialsDir is systemd's
// credentials directory ("" for none).
func loadElicitKey(path string, create bool, credentialsDir string) (key []byte, created bool, err error) {
	read := func(path string) ([]byte, error) { return readElicitKey(path, keyfile.InDir(path, credentialsDir)) }
	key, err = read(path)
	if !errors.Is(err, os.ErrNotExist) || !create {
		return key, false, err
	}
	return keyfile.Create(path, elicitKeyBytes, read)
}

// readElicitKey reads and checks a key file; a credential (from systemd's
// credentials directory) may have another owner. The key never appears in
// an error.
func readElicitKey(path string, credential bool) ([]byte, error) {
	key, err := keyfile.ReadHex(path, func(st os.FileInfo) error {
		if credential {
			return nil
		}
		return keyfile.OwnedByMe(path, st) // keyfile_*.go
	})
	if err != nil && !errors.Is(err, keyfile.ErrNotHex) {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, keyfile.PathError(err)
	}
	if err != nil || len(key) != elicitKeyBytes {
		return nil, fmt.Errorf("%s must hold exactly %d random bytes as %d hex digits and nothing else (e.g. openssl rand -hex 32 > %s; chmod 600 %s; value not shown)", path, elicitKeyBytes, 2*elicitKeyBytes, path, path)
	}
	return key, nil
}
