package settings

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Files that hold a secret or a key: the Proxmox token secret, the
// password, the MCP bearer token and the operator token (text, read by
// readSecretFile), the audit key and the elicitation key (hex, read by
// readHexKeyFile). They are opened the same way (openRegular), and one
// rule says what their mode bits mean (checkLooseFile); the rules that
// differ per file (owner, size, content) stay with each.

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
// mode bits do not describe access (see keyfile.ModeBitsAreAccess).
func (c *Config) checkLooseFile(setting, path string, mode os.FileMode) error {
	if !keyfile.ModeBitsAreAccess || mode.Perm()&0o077 == 0 || keyfile.InDir(path, c.CredentialsDir) {
		return nil
	}
	if mode.Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o): whoever can replace it chooses the secret; chmod 600 %s, or pass it as a systemd credential (LoadCredential=)", path, mode.Perm(), path)
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is readable by group or others (mode %04o); chmod 600 %s, or pass it as a systemd credential (LoadCredential=)", setting, path, mode.Perm(), path))
	return nil
}

// checkLooseKeyFiles applies checkLooseFile to the audit key and the
// elicitation key that exist (a missing one is created 0600; one that is
// not a regular file is refused when it is read). It runs while the
// configuration is parsed, before the Warnings are shown; the secret
// files are checked where they are read.
func (c *Config) checkLooseKeyFiles() error {
	var keys [][2]string
	if c.AuditLog != "" {
		keys = append(keys, [2]string{AuditKeySetting, c.AuditKeyPath()}) // state.go
	}
	if p := c.ElicitKeyPath(c.UsesLevel(c.Classes(), proxmoxsafe.LevelElicit)); p != "" { // state.go
		keys = append(keys, [2]string{ElicitKeySetting, p})
	}
	for _, k := range keys {
		if st, err := os.Stat(k[1]); err == nil && st.Mode().IsRegular() {
			if err := c.checkLooseFile(k[0], k[1], st.Mode()); err != nil {
				return Errorf("%s: %v", k[0], err)
			}
		}
	}
	return nil
}

// readSecretFile reads a file holding one secret as text, named by
// setting in the warning or refusal of checkLooseFile. It removes exactly one trailing
// newline ("\n" or "\r\n"), as `echo secret > file` and most editors leave
// one, and nothing else. Errors name the file, never its content; the
// caller adds the setting.
func (c *Config) readSecretFile(setting, path string) (string, error) {
	f, st, err := keyfile.OpenRegular(path)
	if err != nil {
		return "", keyfile.PathError(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFileBytes+1))
	if err != nil {
		return "", keyfile.PathError(err)
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
