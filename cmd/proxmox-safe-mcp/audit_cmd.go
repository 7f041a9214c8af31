package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// cmdAudit checks and repairs audit logs. It needs no Proxmox settings.
const cmdAudit = "audit"

// Exit codes of "audit verify" (and "audit repair"), beyond exitOK and
// exitUsage.
const (
	// exitAuditBad: the log does not verify (damaged or tampered with), or
	// repair refused to touch it.
	exitAuditBad = 1
	// exitAuditWeak: the chain verifies but with weaker guarantees than a
	// keyed, sealed log: a log from an earlier version, an unkeyed log, or
	// a partial copy without a seal. Distinct so scripts notice.
	exitAuditWeak = 3
)

const auditUsage = `Usage:
  proxmox-safe-mcp audit verify [--key-file F] [--seal F] [--partial] [FILE]
  proxmox-safe-mcp audit repair [--key-file F] [--seal F] [FILE]

FILE defaults to PROXMOX_SAFE_AUDIT_LOG, else the default audit log
($XDG_STATE_HOME/proxmox-safe-mcp/audit.jsonl). The key defaults to
PROXMOX_SAFE_AUDIT_KEY_FILE, else FILE.key; the seal to FILE.seal.

verify checks every line, the keyed chain, the anchor and the seal.
  exit 0  verified: keyed, anchored and sealed
  exit 1  does not verify: damaged or tampered with (the first bad line is named)
  exit 2  usage error, or the file cannot be read
  exit 3  the chain verifies, but with weaker guarantees (an earlier
          version's log, an unkeyed log, or --partial without a seal)
--partial accepts a copy that starts mid-log (e.g. from syslog).

repair removes only a torn final line (a write cut short by a full disk or
a crash), or reseals a seal one record behind, and appends a "repaired"
record saying what it did. It touches nothing else.
  exit 0  repaired, or nothing to repair
  exit 1  the log has another problem and was left as it is
  exit 2  usage error, or the file cannot be read
`

// auditCommand runs "audit verify" or "audit repair".
func auditCommand(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "verify" && args[0] != "repair") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, auditUsage)
			return exitOK
		}
		fmt.Fprint(stderr, "proxmox-safe-mcp: audit needs verify or repair\n"+auditUsage)
		return exitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("audit "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keyFile := fs.String("key-file", "", "")
	sealFile := fs.String("seal", "", "")
	partial := false
	if sub == "verify" {
		fs.BoolVar(&partial, "partial", false, "")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, auditUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "proxmox-safe-mcp: audit %s: %s\n", sub, settings.FlagError(err))
		return exitUsage
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: audit %s takes one file (got %d)\n", sub, fs.NArg())
		return exitUsage
	}
	path := fs.Arg(0)
	if path == "" {
		if v, ok := lookup("PROXMOX_SAFE_AUDIT_LOG"); ok && strings.TrimSpace(v) != "" {
			path = strings.TrimSpace(v)
		} else if dir := settings.StateDir(lookup); dir != "" {
			path = dir + string(os.PathSeparator) + "audit.jsonl"
		} else {
			fmt.Fprintf(stderr, "proxmox-safe-mcp: audit %s: name the log file (PROXMOX_SAFE_AUDIT_LOG is not set and there is no default)\n", sub)
			return exitUsage
		}
	}
	if *keyFile == "" {
		if v, ok := lookup("PROXMOX_SAFE_AUDIT_KEY_FILE"); ok && strings.TrimSpace(v) != "" {
			*keyFile = strings.TrimSpace(v)
		}
	}
	explicitKey := *keyFile != ""
	if !explicitKey {
		*keyFile = path + ".key"
	}
	key, err := readAuditKey(*keyFile)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicitKey:
		key = nil // an unkeyed or earlier-version log; verify says which
	case err != nil:
		fmt.Fprintf(stderr, "proxmox-safe-mcp: audit %s: key: %v\n", sub, keyfile.PathError(err))
		return exitUsage
	}
	if sub == "repair" {
		return auditRepair(path, key, *sealFile, stdout, stderr)
	}
	return auditVerify(path, key, *sealFile, partial, stdout, stderr)
}

// auditUnreadable reports a log (or seal) that is not a regular file or
// cannot be opened: a wrong path, not evidence of tampering, so it is a
// usage error (exit 2) with no tamper advice.
func auditUnreadable(sub string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "proxmox-safe-mcp: audit %s: %v; nothing was checked or changed\n", sub, err)
	return exitUsage
}

func auditVerify(path string, key []byte, seal string, partial bool, stdout, stderr io.Writer) int {
	sum, err := auditlog.VerifyFile(path, &auditlog.VerifyOptions{Key: key, SealPath: seal, Partial: partial})
	if errors.Is(err, auditlog.ErrUnreadable) {
		return auditUnreadable("verify", err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stdout, "audit log %s: DOES NOT VERIFY: %v\n", path, err)
		fmt.Fprintf(stdout, "  %d record(s) before the problem verified.\n", sum.Records)
		fmt.Fprintf(stdout, "  What to do: %s.\n", auditlog.Advice(err))
		if errors.Is(err, auditlog.ErrTornLine) || errors.Is(err, auditlog.ErrSealBehind) {
			fmt.Fprintf(stdout, "  Run: proxmox-safe-mcp audit repair %s\n", path)
		}
		return exitAuditBad
	}
	var weak []string
	desc := fmt.Sprintf("%d record(s), last seq %d", sum.Records, sum.LastSeq)
	if sum.Keyed {
		desc += ", keyed (HMAC-SHA256)"
	} else if !sum.Legacy {
		weak = append(weak, "unkeyed chain: a rewrite by someone who recomputes the hashes would not be detected")
	}
	switch {
	case sum.Legacy:
		weak = append(weak, "written by an earlier version: unkeyed, no anchor and no seal, so removed first or last lines and a recomputed chain would not be detected")
	case sum.Sealed:
		desc += ", sealed"
	case partial:
		weak = append(weak, "checked as a copy (--partial) without a seal: lines missing at its end, or before its first line if it does not start at the anchor, cannot be ruled out")
	case sum.Records == 0:
		desc = "empty"
	}
	if len(weak) == 0 {
		fmt.Fprintf(stdout, "audit log %s: OK: %s.\n", path, desc)
		return exitOK
	}
	fmt.Fprintf(stdout, "audit log %s: chain verifies (%s), with weaker guarantees:\n", path, desc)
	for _, w := range weak {
		fmt.Fprintf(stdout, "  - %s\n", w)
	}
	return exitAuditWeak
}

func auditRepair(path string, key []byte, seal string, stdout, stderr io.Writer) int {
	rep, err := auditlog.Repair(path, &auditlog.Options{Key: key, SealPath: seal})
	switch {
	case errors.Is(err, auditlog.ErrUnreadable):
		return auditUnreadable("repair", err, stderr)
	case err != nil:
		fmt.Fprintf(stdout, "audit log %s: %v\n  Nothing was changed. %s.\n", path, err, auditlog.Advice(err))
		return exitAuditBad
	case rep.Record.Event == "":
		fmt.Fprintf(stdout, "audit log %s: verifies; nothing to repair, nothing changed.\n", path)
	default:
		fmt.Fprintf(stdout, "audit log %s: repaired: %s. Recorded as seq %d (event %q).\n", path, rep.Record.Reason, rep.Record.Seq, rep.Record.Event)
	}
	return exitOK
}
