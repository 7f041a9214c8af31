package proxmoxsafe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// MaxAuditLineBytes bounds one audit log line (without its newline). Records
// are small; the bound exists so that verifying a damaged or hostile file
// cannot exhaust memory, and Record enforces it too so that every log it
// writes can be verified.
const MaxAuditLineBytes = 1 << 20

// AuditLog is an [AuditSink] that writes one JSON object per line and chains
// each line to the one before it with SHA-256 (see [AuditRecord].Prev), so
// that editing, removing or reordering records is detectable with
// [VerifyAuditLog].
//
// It fails closed: after any write or sync error every later Record returns
// an error, because continuing after a possibly partial line would leave a
// chain that no longer verifies, and a mutation must not proceed unaudited.
// If the failure left a torn line, [OpenAuditLog] on the same file then
// refuses until an operator has looked at it.
//
// The chain protects records only once a later record follows them: the
// last line can be altered or dropped undetected unless its hash is kept
// somewhere else too. One AuditLog must be the only writer of its file.
//
// It is safe for concurrent use; records are written one at a time.
type AuditLog struct {
	mu     sync.Mutex
	w      io.Writer
	syncer interface{ Sync() error } // nil if w cannot sync
	closer io.Closer                 // set only when AuditLog opened the file
	seq    int64                     // Seq of the last record written, 0 if none
	prev   string                    // hex SHA-256 of the last line written
	err    error                     // sticky: set by the first failure
	closed bool
}

// NewAuditLog returns an AuditLog that writes to w, starting a new chain at
// Seq 1. If w has a Sync() error method, as *os.File does, it is called
// after every record so that Record returns only once the line is on disk.
// To continue an existing log file use [OpenAuditLog].
func NewAuditLog(w io.Writer) *AuditLog {
	l := &AuditLog{w: w}
	if s, ok := w.(interface{ Sync() error }); ok {
		l.syncer = s
	}
	return l
}

// OpenAuditLog opens the audit log file at path for appending, creating it
// with mode 0600 if needed. An existing file is verified first and the chain
// continues from its last record; a file that does not verify — including
// one whose last line was cut short — is refused, so that a damaged or
// tampered log is noticed by a person instead of silently extended.
//
// Only regular files are accepted: verifying means reading the file, which
// a pipe or device cannot replay. Use [NewAuditLog] for streams.
func OpenAuditLog(path string) (*AuditLog, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("audit log %s: not a regular file", path)
	}
	r, err := os.Open(path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	state, err := verifyAuditLog(r)
	r.Close()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s does not verify, refusing to continue it: %w", path, err)
	}
	l := NewAuditLog(f)
	l.closer = f
	l.seq, l.prev = state.lastSeq, state.lastHash
	return l, nil
}

// Record writes rec as the next line of the log and returns once it is
// written (and synced, if the writer can sync). It fills in Seq and Prev,
// and Time with the current UTC time if it is zero; nothing else is added.
//
// ctx is deliberately not consulted: a record of something that already
// happened upstream must not be dropped because the caller stopped waiting,
// and a local append is not worth interrupting.
func (l *AuditLog) Record(_ context.Context, rec AuditRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("audit log is closed")
	}
	if l.err != nil {
		return fmt.Errorf("audit log failed earlier, refusing further records: %w", l.err)
	}
	rec.Seq = l.seq + 1
	rec.Prev = l.prev
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	line, err := encodeAuditLine(rec)
	if err != nil {
		// Nothing was written, so the chain is intact and the log stays usable.
		return fmt.Errorf("audit log: %w", err)
	}
	// One Write call, so that an O_APPEND file never interleaves a line
	// with anything else, and a failure leaves at most one torn line.
	n, err := l.w.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err == nil && l.syncer != nil {
		err = l.syncer.Sync()
	}
	if err != nil {
		l.err = err
		return fmt.Errorf("audit log: %w", err)
	}
	l.seq = rec.Seq
	l.prev = auditLineHash(line[:len(line)-1])
	return nil
}

// Close closes the file if [OpenAuditLog] opened it; a writer given to
// [NewAuditLog] stays open, since its owner may still need it. Later Record
// calls fail. Closing twice is harmless.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}

// encodeAuditLine returns rec as one JSON line ending in '\n'. HTML
// characters are not escaped so that reasons stay readable with grep; JSON
// escapes every control character and newline, so a line never splits.
func encodeAuditLine(rec AuditRecord) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	line := buf.Bytes() // Encode ends it with '\n'
	if len(line)-1 > MaxAuditLineBytes {
		return nil, fmt.Errorf("record is %d bytes, over the %d-byte line limit", len(line)-1, MaxAuditLineBytes)
	}
	return line, nil
}

// auditLineHash is the chain link: the hex SHA-256 of a raw line without its
// newline, so it can be recomputed from the file bytes alone.
func auditLineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// VerifyAuditLog reads an audit log and checks every line: it must be one
// JSON [AuditRecord] with only the documented fields; Seq must count up by 1
// from the first record's; Prev must be the hex SHA-256 of the previous raw
// line; the first record must have an empty Prev if and only if its Seq is
// 1 (a later start is a log continued from an earlier file); and the file
// must end with a newline. It returns how many records verified and, for
// the first bad line, an error that names its number and why.
//
// Records removed from the start of a log that does not begin at Seq 1, and
// changes to the very last line, cannot be detected from the file alone.
func VerifyAuditLog(r io.Reader) (int, error) {
	st, err := verifyAuditLog(r)
	return st.count, err
}

type auditChainState struct {
	count    int
	lastSeq  int64
	lastHash string
}

func verifyAuditLog(r io.Reader) (auditChainState, error) {
	var st auditChainState
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for lineNo := 1; ; lineNo++ {
		line, ended, err := readAuditLine(br, &buf)
		if err == io.EOF && len(line) == 0 && !ended {
			return st, nil
		}
		if err != nil && err != io.EOF {
			return st, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if !ended {
			return st, fmt.Errorf("line %d: no trailing newline: the last write was cut short or the file was truncated", lineNo)
		}
		rec, err := decodeAuditLine(line)
		if err != nil {
			return st, fmt.Errorf("line %d: not a valid audit record: %w", lineNo, err)
		}
		if st.count == 0 {
			switch {
			case rec.Seq < 1:
				return st, fmt.Errorf("line %d: seq %d, want at least 1", lineNo, rec.Seq)
			case rec.Seq == 1 && rec.Prev != "":
				return st, fmt.Errorf("line %d: first record (seq 1) has a prev hash", lineNo)
			case rec.Seq > 1 && rec.Prev == "":
				return st, fmt.Errorf("line %d: seq %d continues an earlier log but has no prev hash", lineNo, rec.Seq)
			}
		} else {
			if rec.Seq != st.lastSeq+1 {
				return st, fmt.Errorf("line %d: seq %d, want %d (record removed, duplicated or reordered)", lineNo, rec.Seq, st.lastSeq+1)
			}
			if rec.Prev != st.lastHash {
				return st, fmt.Errorf("line %d: prev hash does not match line %d (record edited, removed or reordered)", lineNo, lineNo-1)
			}
		}
		st.count++
		st.lastSeq = rec.Seq
		st.lastHash = auditLineHash(line)
	}
}

// readAuditLine reads one line into *buf, without its '\n', and reports
// whether a '\n' ended it. It fails rather than buffer more than
// MaxAuditLineBytes.
func readAuditLine(br *bufio.Reader, buf *[]byte) (line []byte, ended bool, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n := len(*buf) + len(chunk)
		if err == nil {
			n-- // the '\n' does not count
		}
		if n > MaxAuditLineBytes {
			return nil, false, fmt.Errorf("longer than %d bytes", MaxAuditLineBytes)
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

// decodeAuditLine parses one line strictly: exactly one JSON object with no
// unknown fields, so that nothing can be smuggled into a record that the
// tools reading the log would silently ignore.
func decodeAuditLine(line []byte) (AuditRecord, error) {
	var rec AuditRecord
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
