package auditlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// RepairReport says what [Repair] did.
type RepairReport struct {
	// TornBytes is the length of the torn final line it removed, 0 if none.
	TornBytes int64
	// TornSHA256 is the hex SHA-256 of the removed bytes, so that they can
	// be matched with a copy kept elsewhere.
	TornSHA256 string
	// Resealed: the seal was one record behind and now covers the log.
	Resealed bool
	// Record is the "repaired" record it appended (with its Seq); zero if
	// it did nothing.
	Record proxmoxsafe.AuditRecord
}

// Repair fixes the two kinds of damage an interrupted write leaves
// in a log file, and nothing else: a torn final line (no trailing newline;
// [ErrTornLine]) is cut off, and a seal one record behind
// ([ErrSealBehind]) is rewritten. Everything before must verify with
// opts.Key, as [VerifyFile] checks; a log with any other problem is
// left untouched and the error says why. It then appends a record with
// event "repaired" that says what it did (the torn bytes' length and
// SHA-256), so the repair stays visible in the log. A log that verifies is
// left as it is and the zero RepairReport is returned. opts may be nil;
// its Mirror, if set, receives the "repaired" record.
func Repair(path string, opts *Options) (RepairReport, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var rep RepairReport
	chain, err := newChainKey(o.Key)
	if err != nil {
		return rep, err
	}
	sealPath := o.SealPath
	if sealPath == "" {
		sealPath = path + ".seal"
	}
	f, _, err := localfile.OpenRegular(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	defer f.Close()
	if err := lockWait(f); err != nil {
		return rep, fmt.Errorf("audit log %s: %w", path, err)
	}
	defer localfile.Unlock(f)
	st, err := f.Stat()
	if err != nil {
		return rep, err
	}
	seal, err := openSeal(sealPath)
	if err != nil {
		return rep, fmt.Errorf("audit log seal %w: %w", ErrUnreadable, err)
	}
	defer seal.f.Close()

	sum, verr := verifyFile(io.NewSectionReader(f, 0, st.Size()), seal.f, chain, false)
	var reason string
	switch {
	case verr == nil:
		return rep, nil
	case errors.Is(verr, ErrTornLine) && errors.Is(verr, errSealMismatch):
		return rep, fmt.Errorf("not repaired: %w", verr)
	case errors.Is(verr, ErrTornLine):
		good := sum.size
		torn := make([]byte, st.Size()-good)
		if _, err := f.ReadAt(torn, good); err != nil {
			return rep, err
		}
		if err := f.Truncate(good); err != nil {
			return rep, fmt.Errorf("truncating the torn line: %w", err)
		}
		if err := f.Sync(); err != nil {
			return rep, err
		}
		h := sha256.Sum256(torn)
		rep.TornBytes, rep.TornSHA256 = int64(len(torn)), hex.EncodeToString(h[:])
		reason = fmt.Sprintf("removed a torn final line after seq %d: %d bytes, SHA-256 %s (a write cut short by a full disk or a crash)", sum.LastSeq, rep.TornBytes, rep.TornSHA256)
	case errors.Is(verr, ErrSealBehind):
		rep.Resealed = true
		reason = fmt.Sprintf("resealed: the seal ended one record before seq %d (the process stopped between writing that record and its seal); that record is authenticated by the chain up to it and by this repair", sum.LastSeq)
	default:
		return rep, fmt.Errorf("not repaired: only a torn final line or a seal one record behind can be repaired, and this log has another problem: %w", verr)
	}
	// file stays nil: the lock is already held for the whole repair.
	l := &Log{w: f, syncer: f, mirror: o.Mirror, chain: chain, seal: seal,
		seq: sum.LastSeq, prev: sum.lastLink, size: sum.size}
	if rep.Resealed {
		if err := seal.write(chain, sealState{Seq: l.seq, Size: l.size, Link: l.prev}); err != nil {
			return rep, fmt.Errorf("writing the seal: %w", err)
		}
	}
	rep.Record = proxmoxsafe.AuditRecord{Event: proxmoxsafe.AuditRepaired, Op: opRepaired, Reason: reason}
	if err := l.Record(context.Background(), rep.Record); err != nil {
		return rep, err
	}
	rep.Record.Seq = l.seq
	return rep, nil
}
