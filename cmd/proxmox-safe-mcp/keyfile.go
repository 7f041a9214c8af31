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

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Files that hold a secret or a key: the Proxmox token secret, the
// password, the MCP bearer token and the operator token (text, read by
// readSecretFile), the audit key and the elicitation key (hex, read by
// readHexKeyFile). They are opened the same way (openRegular), and one
// rule says what their mode bits mean (checkLooseFile); the rules that
// differ per file (owner, size, content) stay with each.

// openRegular opens path for reading without blocking on a FIFO and
// refuses anything but a regular file. An error from opening the file is
// returned as is.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, st, nil
}

// checkLooseFile is the one rule for the mode of a file that holds a
// secret or a key (docs/CONFIGURATION.md, "Secret and key files"):
//
//   - group or others may write it: refused. Whoever can replace the file
//     chooses the secret: the operator token that opens the approval page,
//     the elicitation key that seals approvals, the audit key of the
//     log's chain, the MCP token or the Proxmox credentials the server
//     uses. No mount convention makes a secret writable by others.
//   - group or others may only read it: a start-up warning that names the
//     setting, the file, its mode and the fix, never a refusal: Docker
//     (0444) and Kubernetes (0644) mount secrets readable by all inside a
//     container where no other user lives, and a refusal would only push
//     operators to put the secret in the environment.
//
// Nothing is said for a file in systemd's credentials directory
// (LoadCredential=: 0400 plus an ACL for the service's user, which stat
// shows as 0440, in a directory only the service can enter), nor where
// mode bits do not describe access (see modeBitsAreAccess).
func (c *config) checkLooseFile(setting, path string, mode os.FileMode) error {
	if !modeBitsAreAccess || mode.Perm()&0o077 == 0 || inDir(path, c.credentialsDir) {
		return nil
	}
	if mode.Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): whoever can replace it chooses the secret; chmod 600 %s, or pass it as a systemd credential (LoadCredential=)", path, mode.Perm(), path)
	}
	c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is readable by group or others (mode %04o); chmod 600 %s, or pass it as a systemd credential (LoadCredential=)", setting, path, mode.Perm(), path))
	return nil
}

// checkLooseKeyFiles applies checkLooseFile to the audit key and the
// elicitation key that exist (a missing one is created 0600; one that is
// not a regular file is refused when it is read). It runs while the
// configuration is parsed, before the warnings are shown; the secret
// files are checked where they are read.
func (c *config) checkLooseKeyFiles() error {
	var keys [][2]string
	if c.AuditLog != "" {
		keys = append(keys, [2]string{auditKeySetting, auditKeyFile(c)}) // audit_setup.go
	}
	if p := elicitKeyPath(c, usesLevel(c, c.classes(), proxmoxsafe.LevelElicit)); p != "" { // elicit_key.go
		keys = append(keys, [2]string{elicitKeySetting, p})
	}
	for _, k := range keys {
		if st, err := os.Stat(k[1]); err == nil && st.Mode().IsRegular() {
			if err := c.checkLooseFile(k[0], k[1], st.Mode()); err != nil {
				return cfgErr("%s: %v", k[0], err)
			}
		}
	}
	return nil
}

// inDir reports whether path is inside dir (both cleaned; dir "" never).
func inDir(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readSecretFile reads a file holding one secret as text, named by
// setting in the warning or refusal of checkLooseFile. It removes exactly one trailing
// newline ("\n" or "\r\n"), as `echo secret > file` and most editors leave
// one, and nothing else. Errors name the file, never its content; the
// caller adds the setting.
func (c *config) readSecretFile(setting, path string) (string, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return "", pathErr(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFileBytes+1))
	if err != nil {
		return "", pathErr(err)
	}
	if len(b) > maxSecretFileBytes {
		return "", fmt.Errorf("%s is larger than %d bytes; it should hold only the secret", path, maxSecretFileBytes)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		s = t
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if err := c.checkLooseFile(setting, path, st.Mode()); err != nil {
		return "", err
	}
	return s, nil
}

// errKeyNotHex is readHexKeyFile's answer for content that is not hex; the
// caller says what the file must hold (never the content).
var errKeyNotHex = errors.New("not hex")

// readHexKeyFile opens path with openRegular, applies check to it, and
// returns its hex content decoded (one trailing newline allowed). An error
// from opening the file is returned as is.
func readHexKeyFile(path string, check func(os.FileInfo) error) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if check != nil {
		if err := check(st); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, errKeyNotHex
	}
	return key, nil
}

// createKeyFile creates path (parent directories 0700, the file 0600)
// holding n random bytes as hex. When another process created it a moment
// ago, it reads that one with read once written (created false).
func createKeyFile(path string, n int, read func(string) ([]byte, error)) (key []byte, created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("cannot create its directory: %v", pathErr(err))
	}
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		for range 50 {
			if key, err := read(path); err == nil {
				return key, false, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		key, err := read(path)
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
