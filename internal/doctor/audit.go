package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// checkAudit tells whether serve could open and continue its audit log,
// so that doctor never says "ok" where the next command would fail: the
// path is a regular file that is writable and verifies with its key and
// seal, or does not exist yet and can be created. It writes nothing: it opens the
// log for appending without appending, and creates no directory.
func checkAudit(r *report, cfg *settings.Config, readKey func(string) ([]byte, error)) {
	switch {
	case cfg.Demo:
		return // the demo's serve and call make a temporary log
	case !cfg.Mutating():
		r.info("audit log: not needed (no mutation is enabled)")
		return
	case cfg.AuditLog == "":
		return // checkPolicy already reported that serve would not start
	}
	path := cfg.AuditLog
	where := path
	if cfg.AuditDefault {
		where += " (the default)"
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		dir := filepath.Dir(path)
		for {
			dst, err := os.Stat(dir)
			if err == nil && dst.IsDir() {
				break
			}
			if err == nil || !errors.Is(err, os.ErrNotExist) || filepath.Dir(dir) == dir {
				r.fail("audit log: %s cannot be created: %s is not a directory", where, dir)
				return
			}
			dir = filepath.Dir(dir)
		}
		r.ok("audit log: %s does not exist yet; serve creates it (0600, missing directories 0700) with a new key", where)
		return
	case err != nil:
		r.fail("audit log: %s: %v", where, keyfile.PathError(err))
		return
	case !st.Mode().IsRegular():
		r.fail("audit log: %s is not a regular file (%s): serve refuses it; point PROXMOX_SAFE_AUDIT_LOG at a plain file", where, st.Mode().Type())
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
	if err != nil {
		r.fail("audit log: %s is not writable: %v", where, keyfile.PathError(err))
		return
	}
	f.Close()
	key, err := readKey(cfg.AuditKeyPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.fail("audit log: key file: %v", keyfile.PathError(err))
		return
	}
	sum, err := auditlog.VerifyFile(path, &auditlog.VerifyOptions{Key: key})
	switch {
	case err != nil:
		r.fail("audit log: %s does not verify, so serve would refuse to start: %v", where, err)
		r.detail("%s", auditlog.Advice(err))
		if errors.Is(err, auditlog.ErrTornLine) || errors.Is(err, auditlog.ErrSealBehind) {
			r.detail("run: proxmox-safe-mcp audit repair %s", path)
		}
	case sum.Legacy:
		r.fail("audit log: %s was written by an earlier version (no anchor, no key); serve refuses to continue it", where)
		r.detail("%s", auditlog.Advice(auditlog.ErrLegacyFormat))
	case !sum.Keyed:
		r.warn("audit log: %s is writable and verifies (%d records), but is not keyed: a rewrite with recomputed hashes would not be detected; start a new log to get a keyed one", where, sum.Records)
	default:
		r.ok("audit log: %s is writable; %d records verify (keyed, sealed)", where, sum.Records)
	}
}
