package settings

import (
	"path/filepath"
	"strings"
)

// The binary's host-side state: the audit log, its key and seal, and the
// per-guest lock files. With no setting they live in the user's state
// directory (XDG Base Directory: $XDG_STATE_HOME, else ~/.local/state), so
// that the minimal configuration — PVE_URL and a token — starts with no
// path to choose, and every server and `call` of one user shares one log and one set of
// locks.

// stateDirName is the directory under the state home.
const stateDirName = "proxmox-safe-mcp"

// stateDir returns $XDG_STATE_HOME/proxmox-safe-mcp, or
// $HOME/.local/state/proxmox-safe-mcp, or "" when neither is set. A
// relative XDG_STATE_HOME is ignored, as the specification says.
func StateDir(lookup func(string) (string, bool)) string {
	if v, ok := lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, stateDirName)
	}
	if v, ok := lookup("HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, ".local", "state", stateDirName)
	}
	return ""
}

// defaultStatePaths fills in the audit log (when the policy enables
// mutations and none is set) and the lock directory (beside the audit
// log). The demo keeps its own temporary log and needs no locks: its
// cluster lives in the process.
func defaultStatePaths(c *Config, lookup func(string) (string, bool)) {
	if c.Demo {
		c.DemoGrantDir = DemoGrantDir(lookup)
		return
	}
	if dir := StateDir(lookup); dir != "" && c.AuditLog == "" && c.Mutating() {
		c.AuditLog, c.AuditDefault = filepath.Join(dir, DefaultAuditLogName), true
	}
	if c.LockDir == "" && c.AuditLog != "" {
		// Beside the audit log: a place known to be writable (a container's
		// /data volume, systemd's StateDirectory), shared by every process
		// that shares the log.
		c.LockDir = filepath.Join(filepath.Dir(c.AuditLog), "locks")
	}
}

// DemoGrantDir is where the demo keeps its grants: in the state directory
// (so a grant a one-shot `--demo call` asked for outlives the call, and
// `--demo approve CODE` finds it), never where a real server's are (a grant
// is bound to a target, and pve1/qemu/100 may exist for real); "" when no
// state directory is known.
func DemoGrantDir(lookup func(string) (string, bool)) string {
	if d := StateDir(lookup); d != "" {
		return filepath.Join(d, "demo", "grants")
	}
	return ""
}

// DefaultAuditLogName is the audit log's file name in the state directory.
const DefaultAuditLogName = "audit.jsonl"

// AuditKeySetting names the audit key's setting in messages.
const AuditKeySetting = "PROXMOX_SAFE_AUDIT_KEY_FILE (--audit-key-file)"

// auditKeyFile is where the audit key lives.
func (c *Config) AuditKeyPath() string {
	if c.AuditKeyFile != "" {
		return c.AuditKeyFile
	}
	return c.AuditLog + ".key"
}

// setAuditSyslog checks PROXMOX_SAFE_AUDIT_SYSLOG at startup.
func setAuditSyslog(c *Config, v string) error {
	v = strings.TrimSpace(v)
	if _, _, err := ParseAuditSyslog(v); err != nil {
		return err
	}
	c.AuditSyslog = v
	return nil
}

// ElicitKeyName is the default key file, beside the audit log.
const ElicitKeyName = "elicit.key"

// ElicitKeySetting names the setting in errors.
const ElicitKeySetting = "PROXMOX_SAFE_ELICIT_KEY_FILE (--elicit-key-file)"

// elicitKeyPath is the key file the server uses: the setting, else
// elicit.key beside the audit log when a class uses the elicit level
// (never in the demo, whose state is temporary), else "" (a random key).
func (c *Config) ElicitKeyPath(usesElicit bool) string {
	if c.ElicitKeyFile != "" {
		return c.ElicitKeyFile
	}
	if usesElicit && !c.Demo && c.AuditLog != "" {
		return filepath.Join(filepath.Dir(c.AuditLog), ElicitKeyName)
	}
	return ""
}
