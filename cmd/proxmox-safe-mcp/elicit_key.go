package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The elicitation key seals the request state an MCP client echoes back
// when it answers an elicitation (level elicit). Kept in a file, it
// survives a restart, so an elicitation pending across one can still be
// answered; without one the server makes a random key at every start.
//
// The file holds exactly 32 random bytes as 64 hex digits (one trailing
// newline allowed), e.g. `openssl rand -hex 32`. It must be a regular
// file owned by the user running the server and readable by nobody else
// (mode 0600 or 0400): whoever reads it can forge the state of an
// elicitation. A missing file is created (0600) at the first start that
// needs it; a file that breaks a rule is refused at start, never used.

// elicitKeyName is the default key file, beside the audit log.
const elicitKeyName = "elicit.key"

// elicitKeyBytes is the key's size: AES-256.
const elicitKeyBytes = 32

// elicitKeySetting names the setting in errors.
const elicitKeySetting = "PROXMOX_SAFE_ELICIT_KEY_FILE (--elicit-key-file)"

// elicitKeyPath is the key file the server uses: the setting, else
// elicit.key beside the audit log when a class uses the elicit level
// (never in the demo, whose state is temporary), else "" (a random key).
func elicitKeyPath(c *config, usesElicit bool) string {
	if c.ElicitKeyFile != "" {
		return c.ElicitKeyFile
	}
	if usesElicit && !c.Demo && c.AuditLog != "" {
		return filepath.Join(filepath.Dir(c.AuditLog), elicitKeyName)
	}
	return ""
}

// loadElicitKey reads the key file, creating it when it is missing and
// create is set. created reports a new key.
func loadElicitKey(path string, create bool) (key []byte, created bool, err error) {
	key, err = readElicitKey(path)
	if !errors.Is(err, os.ErrNotExist) || !create {
		return key, false, err
	}
	return createKeyFile(path, elicitKeyBytes, readElicitKey) // keyfile.go
}

// readElicitKey reads and checks a key file. The key never appears in an
// error.
func readElicitKey(path string) ([]byte, error) {
	key, err := readHexKeyFile(path, func(st os.FileInfo) error {
		if err := ownedByMe(path, st); err != nil { // elicit_key_*.go
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s is readable or writable by group or others (mode %04o): whoever reads it can forge elicitation answers; chmod 600 %s (or make a new key)", path, st.Mode().Perm(), path)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errKeyNotHex) {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, pathErr(err)
	}
	if err != nil || len(key) != elicitKeyBytes {
		return nil, fmt.Errorf("%s must hold exactly %d random bytes as %d hex digits and nothing else (e.g. openssl rand -hex 32 > %s; chmod 600 %s; value not shown)", path, elicitKeyBytes, 2*elicitKeyBytes, path, path)
	}
	return key, nil
}
