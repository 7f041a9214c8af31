package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("cannot create its directory: %v", pathErr(err))
	}
	raw := make([]byte, elicitKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// Another process created it a moment ago: use that one once written.
		for range 50 {
			if key, err := readElicitKey(path); err == nil {
				return key, false, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		key, err := readElicitKey(path)
		return key, false, err
	}
	if err != nil {
		return nil, false, pathErr(err)
	}
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return nil, false, err
	}
	return raw, true, nil
}

// readElicitKey reads and checks a key file. The key never appears in an
// error.
func readElicitKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, pathErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := ownedByMe(path, st); err != nil { // elicit_key_*.go
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable or writable by group or others (mode %04o): whoever reads it can forge elicitation answers; chmod 600 %s (or make a new key)", path, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != elicitKeyBytes {
		return nil, fmt.Errorf("%s must hold exactly %d random bytes as %d hex digits and nothing else (e.g. openssl rand -hex 32 > %s; chmod 600 %s; value not shown)", path, elicitKeyBytes, 2*elicitKeyBytes, path, path)
	}
	return key, nil
}
