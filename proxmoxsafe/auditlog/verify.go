package auditlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Verification outcomes that say more than "does not verify". Any other
// verification error means the log was damaged or tampered with. They are
// constants of the client's [proxmoxsafe.Sentinel] type, like its own.
const (
	// ErrTornLine: the last line has no newline — what a write cut
	// short by a full disk or a crash leaves. [Repair] removes it.
	ErrTornLine proxmoxsafe.Sentinel = "torn final line"
	// ErrSealBehind: the last record is valid but the seal still
	// covers the one before it — the process stopped between writing a
	// record and its seal. [Repair] reseals and records that.
	ErrSealBehind proxmoxsafe.Sentinel = "seal one record behind"
	// ErrLegacyFormat: the log has no anchor record; it was written by
	// an earlier version (an unkeyed chain, no seal). [Verify]
	// without a key still checks its chain; it cannot be continued.
	ErrLegacyFormat proxmoxsafe.Sentinel = "log written by an earlier version"
	// ErrKey: the log is keyed and no key, or another key, was given.
	ErrKey proxmoxsafe.Sentinel = "audit key missing or wrong"
	// ErrUnreadable: the log or its seal cannot be read as a file — it
	// does not exist, is a directory, a FIFO or a device, or may not be
	// opened. Nothing was checked: it says nothing about tampering.
	ErrUnreadable proxmoxsafe.Sentinel = "cannot be read"
)

// VerifyOptions configures [Verify] and [VerifyFile].
// The zero value (or nil) verifies an unkeyed log from its anchor on.
type VerifyOptions struct {
	// Key is the key the log was written with ([Options].Key). A
	// keyed log does not verify without it; an unkeyed log does not verify
	// with one (it may have been rewritten by someone without the key).
	Key []byte
	// SealPath is the seal to check ([VerifyFile] only); "" means the
	// log's path + ".seal".
	SealPath string
	// Partial accepts a copy that starts in the middle of a log, such as
	// the records a syslog mirror received: the first line need not be
	// the anchor and its Prev is not checked. Everything after it is.
	Partial bool
}

// Summary describes a log that verified.
type Summary struct {
	// Records counts the lines that verified, the anchor included.
	Records int
	// LastSeq is the Seq of the last record, 0 for an empty log.
	LastSeq int64
	// Keyed: the chain is an HMAC chain and was checked with the key.
	Keyed bool
	// Sealed: the seal matched the last record ([VerifyFile]).
	Sealed bool
	// Legacy: the log has no anchor (an earlier version's format): its
	// chain verified, but it is unkeyed, unsealed, and its first lines
	// could have been removed undetected.
	Legacy bool
	// Partial: the copy started in the middle of a log (the Partial
	// option), so nothing before its first line was checked.
	Partial bool

	lastLink string // link of the last line, for continuing the chain
	size     int64  // bytes through the last verified line's newline
}

// Verify reads an audit log and checks every line: it must be one
// JSON [proxmoxsafe.AuditRecord] with only the documented fields; the first must be
// the anchor (Seq 1, empty Prev, a known Format, the key's id); Seq must
// count up by 1; Prev must be the link (HMAC-SHA256 with the key, SHA-256
// without) of the previous raw line; no other anchor may follow; and the
// file must end with a newline. It returns a summary and, for the first
// bad line, an error that names its number and why.
//
// It checks no seal, so removal of the last records or an edit of the very
// last line is not detected: use [VerifyFile] for log files. A log
// without an anchor verifies only without a key, with Legacy set (see
// [ErrLegacyFormat]). opts may be nil.
func Verify(r io.Reader, opts *VerifyOptions) (Summary, error) {
	var o VerifyOptions
	if opts != nil {
		o = *opts
	}
	chain, err := newChainKey(o.Key)
	if err != nil {
		return Summary{}, err
	}
	v := &chainVerifier{chain: chain, partial: o.Partial}
	err = v.run(r, 1)
	return v.summary(), err
}

// VerifyFile verifies the log file at path like [Verify] and
// then its seal: the seal's MAC, and that it names the log's last record
// and size. This detects edits of the last line and removal of records
// from the end, which the chain alone cannot. A seal one record behind is
// reported as [ErrSealBehind]; a torn final line (with a seal that
// matches the lines before it) as [ErrTornLine]. Non-regular files
// are refused without blocking. opts may be nil.
func VerifyFile(path string, opts *VerifyOptions) (Summary, error) {
	var o VerifyOptions
	if opts != nil {
		o = *opts
	}
	chain, err := newChainKey(o.Key)
	if err != nil {
		return Summary{}, err
	}
	f, _, err := localfile.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	sealPath := o.SealPath
	if sealPath == "" {
		sealPath = path + ".seal"
	}
	var seal io.ReaderAt // nil: no seal file
	if sf, _, err := localfile.OpenRegular(sealPath, os.O_RDONLY); err == nil {
		defer sf.Close()
		seal = sf
	} else if !errors.Is(err, os.ErrNotExist) {
		return Summary{}, fmt.Errorf("seal %w: %w", ErrUnreadable, err)
	}
	return verifyFile(io.NewSectionReader(f, 0, st.Size()), seal, chain, o.Partial)
}

// verifyFile checks the log in r and then its seal, read from seal
// (nil: missing).
func verifyFile(r io.Reader, seal io.ReaderAt, chain chainKey, partial bool) (Summary, error) {
	v := &chainVerifier{chain: chain, partial: partial}
	chainErr := v.run(r, 1)
	sum := v.summary()
	if chainErr != nil && !errors.Is(chainErr, ErrTornLine) {
		return sum, chainErr
	}
	if sum.Legacy || (partial && seal == nil) {
		return sum, chainErr // nothing sealed to compare
	}
	var sealed *sealState
	if seal != nil {
		s, err := readSeal(seal, chain)
		if err != nil {
			return sum, err
		}
		sealed = s
	}
	if sealed == nil {
		if v.count == 0 && chainErr == nil {
			return sum, nil // an empty log that was never sealed
		}
		if chainErr != nil {
			return sum, fmt.Errorf("%w, and the seal file is missing or empty: %w", chainErr, errSealMismatch)
		}
		return sum, fmt.Errorf("the seal file is missing or empty, so removal of the last records cannot be ruled out: %w", errSealMismatch)
	}
	got := sealState{Seq: v.lastSeq, Size: v.size, Link: v.lastLink}
	switch {
	case *sealed == got:
		sum.Sealed = true
		return sum, chainErr // nil, or a torn line after a sealed prefix: repairable
	case chainErr == nil && v.count >= 2 && *sealed == (sealState{Seq: v.prevSeq, Size: v.prevSize, Link: v.prevLink}):
		return sum, fmt.Errorf("line %d (seq %d) is not covered by the seal, which ends at seq %d: %w", v.count, v.lastSeq, sealed.Seq, ErrSealBehind)
	case chainErr != nil:
		return sum, fmt.Errorf("%w, and the seal (seq %d, %d bytes) does not match the lines before it (seq %d, %d bytes): %w",
			chainErr, sealed.Seq, sealed.Size, got.Seq, got.Size, errSealMismatch)
	default:
		return sum, fmt.Errorf("the end of the log does not match its seal (sealed: seq %d, %d bytes; log: seq %d, %d bytes): records were removed from the end, the last line was edited, or the log was replaced: %w",
			sealed.Seq, sealed.Size, got.Seq, got.Size, errSealMismatch)
	}
}

// chainVerifier checks lines one at a time; it can also resume after the
// last line a Log knows, to catch up with another process's records.
type chainVerifier struct {
	chain   chainKey
	partial bool

	count    int    // lines verified
	size     int64  // bytes verified, through the last newline
	lastSeq  int64  // Seq of the last verified line
	lastLink string // link of the last verified line
	legacy   bool
	started  bool // started mid-log (partial)

	prevSeq  int64 // the line before the last, for the seal check
	prevSize int64
	prevLink string
}

func (v *chainVerifier) summary() Summary {
	return Summary{
		Records: v.count, LastSeq: v.lastSeq, Keyed: v.chain.keyed(),
		Legacy: v.legacy, Partial: v.started, lastLink: v.lastLink, size: v.size,
	}
}

// run reads lines from r; firstLine numbers the first one for messages.
func (v *chainVerifier) run(r io.Reader, firstLine int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for lineNo := firstLine; ; lineNo++ {
		line, ended, err := readLine(br, &buf)
		if err == io.EOF && len(line) == 0 && !ended {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if !ended {
			return fmt.Errorf("line %d: no trailing newline: the last write was cut short or the file was truncated: %w", lineNo, ErrTornLine)
		}
		if err := v.line(lineNo, line); err != nil {
			return err
		}
	}
}

func (v *chainVerifier) line(lineNo int, line []byte) error {
	rec, err := decodeLine(line)
	if err != nil {
		return fmt.Errorf("line %d: not a valid audit record: %w", lineNo, err)
	}
	if v.count == 0 && v.lastSeq == 0 {
		if err := v.first(lineNo, rec); err != nil {
			return err
		}
	} else {
		if rec.Event == proxmoxsafe.AuditAnchor {
			return fmt.Errorf("line %d: an anchor record after the start of the log (a log was spliced in)", lineNo)
		}
		if rec.Seq != v.lastSeq+1 {
			return fmt.Errorf("line %d: seq %d, want %d (record removed, duplicated or reordered)", lineNo, rec.Seq, v.lastSeq+1)
		}
		if rec.Prev != v.lastLink {
			return fmt.Errorf("line %d: prev hash does not match line %d (record edited, removed or reordered)", lineNo, lineNo-1)
		}
	}
	v.prevSeq, v.prevSize, v.prevLink = v.lastSeq, v.size, v.lastLink
	v.count++
	v.size += int64(len(line)) + 1
	v.lastSeq = rec.Seq
	v.lastLink = v.chain.link(line)
	return nil
}

// first checks the first line: the anchor, or (partial) any record, or
// (no key) the first line of a log from an earlier version.
func (v *chainVerifier) first(lineNo int, rec proxmoxsafe.AuditRecord) error {
	if rec.Event == proxmoxsafe.AuditAnchor {
		switch {
		case rec.Seq != 1 || rec.Prev != "":
			return fmt.Errorf("line %d: the anchor must have seq 1 and no prev hash", lineNo)
		case rec.Format != Format:
			return fmt.Errorf("line %d: format %q is not one this version knows (%s)", lineNo, rec.Format, Format)
		case rec.KeyID != "" && !v.chain.keyed():
			return fmt.Errorf("line %d: the log is keyed (key id %s) and no key was given: %w", lineNo, rec.KeyID, ErrKey)
		case rec.KeyID == "" && v.chain.keyed():
			return fmt.Errorf("line %d: the log is not keyed but a key was given: it was written without the key, or rewritten by someone who does not have it", lineNo)
		case rec.KeyID != v.chain.id():
			return fmt.Errorf("line %d: the log was written with another key (key id %s, the given key's is %s): %w", lineNo, rec.KeyID, v.chain.id(), ErrKey)
		}
		return nil
	}
	if rec.Seq < 1 {
		return fmt.Errorf("line %d: seq %d, want at least 1", lineNo, rec.Seq)
	}
	if v.partial {
		v.started = true
		return nil
	}
	if rec.Seq == 1 && rec.Prev == "" && !v.chain.keyed() {
		v.legacy = true // an earlier version's log: its chain is checked as it was
		return nil
	}
	if rec.Seq == 1 && rec.Prev == "" {
		return fmt.Errorf("line %d: no anchor record: the log cannot be authenticated with the key: %w", lineNo, ErrLegacyFormat)
	}
	return fmt.Errorf("line %d: the first record is seq %d, not the anchor: the first lines of the log were removed (or it is a partial copy)", lineNo, rec.Seq)
}

// readLine reads one line into *buf, without its '\n', and reports
// whether a '\n' ended it. It fails rather than buffer more than
// MaxLineBytes.
func readLine(br *bufio.Reader, buf *[]byte) (line []byte, ended bool, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n := len(*buf) + len(chunk)
		if err == nil {
			n-- // the '\n' does not count
		}
		if n > MaxLineBytes {
			return nil, false, fmt.Errorf("longer than %d bytes", MaxLineBytes)
		}
		*buf = append(*buf, chunk...)
		switch err {
		case nil:
			return (*buf)[:len(*buf)-1], true, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return *buf, false, err
		}
	}
}

// decodeLine parses one line strictly: exactly one JSON object with no
// unknown fields, so that nothing can be smuggled into a record that the
// tools reading the log would silently ignore.
func decodeLine(line []byte) (proxmoxsafe.AuditRecord, error) {
	var rec proxmoxsafe.AuditRecord
	if len(line) == 0 || line[0] != '{' {
		return rec, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return rec, errors.New("data after the JSON object")
	}
	return rec, nil
}
