package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// openAudit opens (or creates) the audit log with its key and, if asked,
// its syslog copy, and returns it with the function that closes both.
// Missing parent directories are created 0700. Errors name the setting and
// say what to do.
func openAudit(c *settings.Config, stderr io.Writer) (*auditlog.Log, func(), error) {
	const name = "PROXMOX_SAFE_AUDIT_LOG (--audit-log)"
	if err := os.MkdirAll(filepath.Dir(c.AuditLog), 0o700); err != nil {
		return nil, nil, settings.Errorf("%s: cannot create its directory: %v", name, keyfile.PathError(err))
	}
	key, err := loadOrCreateAuditKey(c.AuditKeyPath(), c.AuditLog)
	if err != nil {
		return nil, nil, settings.Errorf("%s: %v", settings.AuditKeySetting, err)
	}
	// A server verifies an existing log in the background, so that a long
	// log does not delay its start; the library still refuses every
	// mutation until the log verified (proxmoxsafe/auditlog). Over stdio
	// the verification begins with the first tools/call, or the first
	// record, whichever comes first (watchFirstCall): a host
	// starts every configured server and lists its tools, and reading and
	// decoding the log then competed with the first answers for the CPU.
	// The one-shot commands verify first: call may be about to mutate,
	// doctor reports.
	serving := c.Command == settings.CmdServe
	opts := &auditlog.Options{Key: key, VerifyInBackground: serving, VerifyLater: serving && c.HTTP.Addr == ""}
	closeMirror := func() {}
	if c.AuditSyslog != "" {
		w, closer, err := dialAuditSyslog(c.AuditSyslog) // audit_syslog*.go
		if err != nil {
			return nil, nil, settings.Errorf("PROXMOX_SAFE_AUDIT_SYSLOG (--audit-syslog): %v", err)
		}
		opts.Mirror, closeMirror = w, closer
	}
	al, err := auditlog.Open(c.AuditLog, opts)
	if err != nil {
		closeMirror()
		var oe *auditlog.OpenError
		if errors.As(err, &oe) {
			return nil, nil, settings.Errorf("%s: %v (details: proxmox-safe-mcp audit verify %s)", name, err, c.AuditLog)
		}
		return nil, nil, settings.Errorf("%s: %v", name, err)
	}
	if c.AuditDefault {
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

// auditLogs are the app's audit logs: its own, or each cluster's.
func (a *app) auditLogs() []*auditlog.Log {
	var logs []*auditlog.Log
	for _, m := range a.members {
		if m.app.audit != nil {
			logs = append(logs, m.app.audit)
		}
	}
	if len(a.members) == 0 && a.audit != nil {
		logs = append(logs, a.audit)
	}
	return logs
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
	key, _, err = keyfile.Create(path, auditKeyBytes, readAuditKey) // keyfile.go
	return key, err
}

// readAuditKey reads a hex key file. The key itself never appears in an
// error.
func readAuditKey(path string) ([]byte, error) {
	key, err := keyfile.ReadHex(path, nil) // keyfile.go
	if err != nil && !errors.Is(err, keyfile.ErrNotHex) {
		return nil, err
	}
	if err != nil || len(key) < auditlog.MinKeyBytes {
		return nil, fmt.Errorf("%s must hold a key of at least %d bytes as hex digits and nothing else (e.g. openssl rand -hex 32 > %s; value not shown)", path, auditlog.MinKeyBytes, path)
	}
	return key, nil
}
