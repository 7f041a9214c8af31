package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// The binary's host-side state: the audit log, its key and seal, and the
// per-guest lock files. With no setting they live in the user's state
// directory (XDG Base Directory: $XDG_STATE_HOME, else ~/.local/state), so
// that the minimal configuration — PVE_URL and a token, nothing else —
// starts, and every server and `call` of one user shares one log and one
// set of locks.

// stateDirName is the directory under the state home.
const stateDirName = "proxmox-safe-mcp"

// stateDir returns $XDG_STATE_HOME/proxmox-safe-mcp, or
// $HOME/.local/state/proxmox-safe-mcp, or "" when neither is set. A
// relative XDG_STATE_HOME is ignored, as the specification says.
func stateDir(lookup func(string) (string, bool)) string {
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
func defaultStatePaths(c *config, lookup func(string) (string, bool)) {
	if c.Demo {
		return
	}
	if dir := stateDir(lookup); dir != "" && c.AuditLog == "" && c.mutating() {
		c.AuditLog, c.auditDefault = filepath.Join(dir, defaultAuditLogName), true
	}
	if c.LockDir == "" && c.AuditLog != "" {
		// Beside the audit log: a place known to be writable (a container's
		// /data volume, systemd's StateDirectory), shared by every process
		// that shares the log.
		c.LockDir = filepath.Join(filepath.Dir(c.AuditLog), "locks")
	}
}

// defaultAuditLogName is the audit log's file name in the state directory.
const defaultAuditLogName = "audit.jsonl"

// auditKeySetting names the audit key's setting in messages.
const auditKeySetting = "PROXMOX_SAFE_AUDIT_KEY_FILE (--audit-key-file)"

// auditKeyFile is where the audit key lives.
func auditKeyFile(c *config) string {
	if c.AuditKeyFile != "" {
		return c.AuditKeyFile
	}
	return c.AuditLog + ".key"
}

// openAudit opens (or creates) the audit log with its key and, if asked,
// its syslog copy, and returns it with the function that closes both.
// Missing parent directories are created 0700. Errors name the setting and
// say what to do.
func openAudit(c *config, stderr io.Writer) (*auditlog.Log, func(), error) {
	const name = "PROXMOX_SAFE_AUDIT_LOG (--audit-log)"
	if err := os.MkdirAll(filepath.Dir(c.AuditLog), 0o700); err != nil {
		return nil, nil, cfgErr("%s: cannot create its directory: %v", name, pathErr(err))
	}
	key, err := loadOrCreateAuditKey(auditKeyFile(c), c.AuditLog)
	if err != nil {
		return nil, nil, cfgErr("%s: %v", auditKeySetting, err)
	}
	// A server verifies an existing log in the background, so that a long
	// log does not delay its start; the library still refuses every
	// mutation until the log verified (proxmoxsafe/auditlog). The one-shot
	// commands verify first: call may be about to mutate, doctor reports.
	opts := &auditlog.Options{Key: key, VerifyInBackground: c.Command == cmdServe}
	closeMirror := func() {}
	if c.AuditSyslog != "" {
		w, closer, err := dialAuditSyslog(c.AuditSyslog) // audit_syslog*.go
		if err != nil {
			return nil, nil, cfgErr("PROXMOX_SAFE_AUDIT_SYSLOG (--audit-syslog): %v", err)
		}
		opts.Mirror, closeMirror = w, closer
	}
	al, err := auditlog.Open(c.AuditLog, opts)
	if err != nil {
		closeMirror()
		var oe *auditlog.OpenError
		if errors.As(err, &oe) {
			return nil, nil, cfgErr("%s: %v (details: proxmox-safe-mcp audit verify %s)", name, err, c.AuditLog)
		}
		return nil, nil, cfgErr("%s: %v", name, err)
	}
	if c.auditDefault {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: audit log %s (the default; set PROXMOX_SAFE_AUDIT_LOG to choose another)\n", c.AuditLog)
	}
	return al, func() { _ = al.Close(); closeMirror() }, nil
}

// reportAuditVerification logs, once the background verification of the
// audit log has ended, whether the log did not verify (mutations are then
// refused with the same reason; reads go on). It returns a function that
// stops waiting and returns once the watcher has ended.
func reportAuditVerification(ctx context.Context, al *auditlog.Log, path string, warn *slog.Logger) func() {
	if al == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := al.WaitVerified(ctx); err != nil && ctx.Err() == nil {
			warn.Error("the audit log does not verify: every mutation is refused until it is dealt with; read tools keep working (details: proxmox-safe-mcp audit verify "+path+")",
				slog.String("error", err.Error()))
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// auditKeyBytes is the size of a key the binary creates.
const auditKeyBytes = 32

// loadOrCreateAuditKey reads the key file (hex, one trailing newline
// allowed). A missing key file is created — 32 random bytes, 0600 — only
// for a log that does not exist yet or is empty: a key made up for an
// existing log could never verify it, so then the log is opened without a
// key and the library says what is wrong (a keyed log: the key is
// missing; a log from an earlier version: move it aside).
func loadOrCreateAuditKey(path, logPath string) ([]byte, error) {
	key, err := readAuditKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if st, err := os.Stat(logPath); err == nil && st.Size() > 0 {
		return nil, nil
	}
	key, _, err = createKeyFile(path, auditKeyBytes, readAuditKey) // keyfile.go
	return key, err
}

// readAuditKey reads a hex key file. The key itself never appears in an
// error.
func readAuditKey(path string) ([]byte, error) {
	key, err := readHexKeyFile(path, nil) // keyfile.go
	if err != nil && !errors.Is(err, errKeyNotHex) {
		return nil, err
	}
	if err != nil || len(key) < auditlog.MinKeyBytes {
		return nil, fmt.Errorf("%s must hold a key of at least %d bytes as hex digits and nothing else (e.g. openssl rand -hex 32 > %s; value not shown)", path, auditlog.MinKeyBytes, path)
	}
	return key, nil
}

// setAuditSyslog checks PROXMOX_SAFE_AUDIT_SYSLOG at startup.
func setAuditSyslog(c *config, v string) error {
	v = strings.TrimSpace(v)
	if _, _, err := parseAuditSyslog(v); err != nil {
		return err
	}
	c.AuditSyslog = v
	return nil
}
