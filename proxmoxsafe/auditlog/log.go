package auditlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// MaxLineBytes bounds one audit log line (without its newline). Records
// are small; the bound exists so that verifying a damaged or hostile file
// cannot exhaust memory, and Record enforces it too so that every log it
// writes can be verified.
const MaxLineBytes = 1 << 20

// Format names the line format [Log] writes. It is the Format of
// the anchor record that begins every log; a log without an anchor was
// written by an earlier version (see [ErrLegacyFormat]).
const Format = "proxmox-safe-mcp-audit/2"

// MinKeyBytes is the shortest key [Options].Key accepts.
const MinKeyBytes = 16

// The Op of the two records the log writes about itself. They name the
// functions that wrote them when the line format was fixed (before this
// package existed); they stay, so that the line format is unchanged and
// whatever reads the log finds them as before.
const (
	opAnchor   proxmoxsafe.Operation = "OpenAuditLog"
	opRepaired proxmoxsafe.Operation = "RepairAuditLog"
)

// Options configures [New], [Open] and [Repair]. The zero value (or nil)
// is an unkeyed log (sealed when it is a file) with no mirror, verified
// before Open returns.
type Options struct {
	// Key, when set, makes the chain an HMAC-SHA256 chain: each record's
	// Prev is the HMAC of the line before it, and the seal is keyed too, so
	// that nobody without the key can rewrite the log and recompute the
	// chain. Keep it outside the log (a 0600 file the log's readers cannot
	// read, or a secret the operator provides); it is needed again to
	// continue and to verify the log. At least [MinKeyBytes] bytes.
	// nil means a plain SHA-256 chain, which detects damage and careless
	// edits but not a rewrite by someone who recomputes the hashes.
	Key []byte
	// SealPath is where [Open] keeps the sealed tail: the last
	// record's sequence number, link and the log's size, authenticated with
	// the key and rewritten after every record, so that removing or editing
	// the last lines is detected too. "" means the log's path + ".seal".
	// [New] writes no seal.
	SealPath string
	// Mirror, when set, receives a copy of every line (with its newline,
	// in one Write call) after it is on disk — for example a
	// *syslog.Writer that ships records off the host, where someone with
	// the server's own privileges cannot change them. A Mirror failure
	// makes Record return an error (so the mutation is not performed) but
	// does not stop the log: the next record is mirrored again. nil means
	// no mirror.
	Mirror io.Writer
	// VerifyInBackground makes [Open] verify an existing log in a
	// goroutine instead of before it returns, so that a server can start
	// serving reads at once whatever the log's size. Everything else is
	// checked before it returns, as without it: the file is a regular
	// file, it can be locked, and its size and seal are read (under the
	// lock, so the verification compares the log with the seal of that
	// moment). The log still fails closed: [Log.Record] waits until
	// the verification has ended, returns an error without writing
	// anything if ctx ends first, and fails from then on, like after a
	// write error, if the log did not verify; so no mutation proceeds
	// unaudited or extends a log that does not verify.
	// [Log.WaitVerified] reports the outcome. false (the default)
	// verifies before Open returns.
	VerifyInBackground bool
	// VerifyLater, with VerifyInBackground, holds that verification back
	// until [Log.StartVerification] is called or a [Log.Record] needs the
	// log verified, whichever comes first (Record then starts it and
	// waits, as above): a server that is only listed, or only read from,
	// does not spend its start reading and decoding the log. Nothing else
	// changes: Open checks what it checks with VerifyInBackground alone,
	// and no record is written before the log verified.
	VerifyLater bool
}

// Log is a [proxmoxsafe.AuditSink] that writes one JSON object per line
// and chains each line to the one before it (see
// [proxmoxsafe.AuditRecord].Prev): with a key (HMAC-SHA256) nobody
// without the key can edit, remove, reorder or forge records undetected;
// without one (SHA-256) damage and careless edits are detected. The first line is an anchor record (event "anchor", Seq 1) that
// names the format and the key, so a log whose first lines were removed no
// longer verifies. [Open] also keeps a sealed tail in a separate
// file, so that edits to or removal of the last lines are detected.
// [VerifyFile] checks all of it; docs/SECURITY.md says what remains
// undetectable (a rollback of log and seal together, anything done by
// someone holding the key).
//
// It fails closed: after any write or sync error every later Record returns
// an error, because continuing after a possibly partial line would leave a
// chain that no longer verifies, and a mutation must not proceed unaudited.
// If the failure left a torn line, [Open] on the same file then
// refuses until an operator has looked at it ([Repair] removes
// exactly that torn line). One Log must be the only writer of its
// file.
//
// It is safe for concurrent use; records are written one at a time.
type Log struct {
	mu     sync.Mutex
	w      io.Writer
	syncer interface{ Sync() error } // nil if w cannot sync
	closer io.Closer                 // set only when Log opened the file
	mirror io.Writer
	file   *os.File // the log file, locked around each append; nil for streams
	chain  chainKey
	seal   *sealFile // nil for streams
	size   int64     // bytes in the file so far, for the seal
	seq    int64     // Seq of the last record written, 0 if none (no anchor yet)
	prev   string    // link of the last line written
	err    error     // sticky: set by the first failure
	closed bool

	// Background verification (Options.VerifyInBackground):
	// verified is closed when it has ended, after verifyErr and, if it
	// succeeded, seq, prev and size are set; nil when the log was verified
	// (or created) before Open returned. stopVerify, closed by
	// Close, makes it stop early.
	verified   chan struct{}
	stopVerify chan struct{}
	verifyErr  error
	// startVerify starts the background verification (verifyBackground),
	// once; Close uses it up instead when none has started
	// (Options.VerifyLater).
	startVerify sync.Once
	verifyFrom  func() // the verification to start; nil when Open verified
}

// New returns a Log that writes to w, starting a new chain:
// the first Record writes the anchor record (Seq 1) and then its own
// record (Seq 2) in one Write call. If w has a Sync() error method, as
// *os.File does, it is called after every record so that Record returns
// only once the line is on disk. Streams have no seal. To create or
// continue a log file use [Open]. opts may be nil; an invalid Key
// makes every Record fail.
func New(w io.Writer, opts *Options) *Log {
	var o Options
	if opts != nil {
		o = *opts
	}
	l := &Log{w: w, mirror: o.Mirror}
	if s, ok := w.(interface{ Sync() error }); ok {
		l.syncer = s
	}
	l.chain, l.err = newChainKey(o.Key)
	return l
}

// Open opens the audit log file at path for appending. A missing or
// empty file becomes a new log: it is created with mode 0600 and its anchor
// record and seal are written at once. An existing log is verified first,
// with its seal, exactly as [VerifyFile] does, and the chain continues
// from its last record; a log that does not verify — including one whose
// last line was cut short, whose seal is missing or does not match, or
// that was written by an earlier version or with another key — is refused,
// so that a damaged or tampered log is noticed by a person instead of
// silently extended. The error says what to do.
//
// Only regular files are accepted, and the check is made without blocking
// on the path: a FIFO, device or socket is refused at once. opts may be nil.
func Open(path string, opts *Options) (*Log, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	chain, err := newChainKey(o.Key)
	if err != nil {
		return nil, err
	}
	sealPath := o.SealPath
	if sealPath == "" {
		sealPath = path + ".seal"
	}
	f, _, err := localfile.OpenRegular(path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	// Another process may be creating or appending to the same log.
	if err := lockWait(f); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	defer localfile.Unlock(f)
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	seal, err := openSeal(sealPath)
	if err != nil {
		return nil, fmt.Errorf("audit log seal: %w", err)
	}
	defer func() {
		if !ok {
			seal.f.Close()
		}
	}()
	l := &Log{w: f, syncer: f, file: f, closer: multiCloser{f, seal.f}, mirror: o.Mirror, chain: chain, seal: seal}
	if st.Size() == 0 {
		sealed, err := seal.read(chain)
		if err != nil {
			return nil, fmt.Errorf("audit log %s: %w", path, err)
		}
		if sealed != nil && sealed.Seq > 0 {
			return nil, fmt.Errorf("audit log %s is empty, which does not match its seal %s (%d records): the log was emptied or replaced; keep both files as evidence and move them aside to start a new log: %w",
				path, sealPath, sealed.Seq, errSealMismatch)
		}
		if err := l.writeAnchor(); err != nil {
			return nil, fmt.Errorf("audit log %s: %w", path, err)
		}
		ok = true
		return l, nil
	}
	if o.VerifyInBackground {
		// The seal as it is now, under the lock: another process may
		// append (and reseal) while the goroutine reads the log up to
		// this size; catchUp verifies what it appended.
		sealNow := make([]byte, 4*sealBytes)
		n, err := seal.f.ReadAt(sealNow, 0)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("audit log %s: reading the seal: %w", path, err)
		}
		l.verified, l.stopVerify = make(chan struct{}), make(chan struct{})
		r, sealR := io.NewSectionReader(f, 0, st.Size()), bytes.NewReader(sealNow[:n])
		l.verifyFrom = func() { go l.verifyBackground(path, r, sealR) }
		if !o.VerifyLater {
			l.StartVerification()
		}
		ok = true
		return l, nil
	}
	sum, err := verifyFile(io.NewSectionReader(f, 0, st.Size()), seal.f, chain, false)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	l.seq, l.prev, l.size = sum.LastSeq, sum.lastLink, sum.size
	ok = true
	return l, nil
}

// StartVerification starts the background verification that Open held
// back ([Options].VerifyLater). It does nothing when the verification
// has started, or when Open verified the log or created it.
func (l *Log) StartVerification() {
	if l.verifyFrom != nil {
		l.startVerify.Do(l.verifyFrom)
	}
}

// errVerifyStopped ends a background verification when the log is closed.
var errVerifyStopped = errors.New("the audit log was closed before its verification ended")

// verifyBackground verifies the log in r against the seal in seal (both as
// they were when Open held the lock) and records the outcome.
func (l *Log) verifyBackground(path string, r io.Reader, seal io.ReaderAt) {
	defer close(l.verified)
	if verifyHook != nil {
		verifyHook()
	}
	sum, err := verifyFile(stoppableReader{r, l.stopVerify}, seal, l.chain, false)
	switch {
	case errors.Is(err, errVerifyStopped):
		l.verifyErr = err
	case err != nil:
		l.verifyErr = &OpenError{Path: path, Err: err}
	default:
		l.seq, l.prev, l.size = sum.LastSeq, sum.lastLink, sum.size
	}
}

// verifyHook and waitHook are for tests, nil otherwise: the first
// runs at the start of every background verification (tests block it to
// hold a log unverified), the second when a Record starts waiting for a
// verification (so a test knows a mutation is held there).
var verifyHook, waitHook func()

// stoppableReader reads from r until stop is closed.
type stoppableReader struct {
	r    io.Reader
	stop <-chan struct{}
}

func (s stoppableReader) Read(p []byte) (int, error) {
	select {
	case <-s.stop:
		return 0, errVerifyStopped
	default:
		return s.r.Read(p)
	}
}

// WaitVerified waits until the log has been verified and returns nil, or
// the reason it does not verify (an [*OpenError]; every Record fails
// with it), or ctx's error if ctx ends first. It does not start a
// verification held back with [Options].VerifyLater. A log opened without
// [Options].VerifyInBackground, or created empty, or made with
// [New], has nothing to wait for: nil at once.
func (l *Log) WaitVerified(ctx context.Context) error {
	if l.verified == nil {
		return nil
	}
	select {
	case <-l.verified:
		return l.verifyErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OpenError is the error [Open] returns for an existing log
// that does not verify. Err says why and matches [ErrTornLine],
// [ErrSealBehind], [ErrLegacyFormat] or [ErrKey] where one
// applies; its message ends with what an operator can do.
type OpenError struct {
	Path string
	Err  error
}

// Error implements the error interface.
func (e *OpenError) Error() string {
	return fmt.Sprintf("audit log %s does not verify, refusing to continue it: %v; %s", e.Path, e.Err, Advice(e.Err))
}

// Unwrap returns the verification error.
func (e *OpenError) Unwrap() error { return e.Err }

// Advice says, in one sentence, what an operator can do about a log
// that failed verification with err.
func Advice(err error) string {
	switch {
	case errors.Is(err, ErrTornLine), errors.Is(err, ErrSealBehind):
		return "this is what an interrupted write (full disk, crash) leaves; `proxmox-safe-mcp audit repair` fixes exactly that and records that it did"
	case errors.Is(err, ErrLegacyFormat):
		return "it was written by an earlier version without an anchor or key: keep it (`proxmox-safe-mcp audit verify` still checks it) and move it aside so that a new log is started, e.g. mv it to a .legacy name"
	case errors.Is(err, ErrUnreadable):
		return "name the log file itself (a regular file the server wrote), check its permissions, and run the command again; nothing was checked"
	case errors.Is(err, ErrKey):
		return "give the key the log was written with (PROXMOX_SAFE_AUDIT_KEY_FILE); without it the log cannot be authenticated"
	default:
		return "it may have been damaged or tampered with: keep it and its .seal file as evidence, inspect it with `proxmox-safe-mcp audit verify`, then move both aside so that a new log is started"
	}
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// anchorRecord is the first record of every log.
func (l *Log) anchorRecord() proxmoxsafe.AuditRecord {
	return proxmoxsafe.AuditRecord{
		Time:   time.Now().UTC(),
		Event:  proxmoxsafe.AuditAnchor,
		Op:     opAnchor,
		Reason: "log created",
		Format: Format,
		KeyID:  l.chain.id(),
		Seq:    1,
	}
}

// writeAnchor starts a new file log: the anchor line and its seal.
func (l *Log) writeAnchor() error {
	return l.append(func() ([][]byte, int64, error) {
		line, err := encodeLine(l.anchorRecord())
		return [][]byte{line}, 1, err
	})
}

// Record writes rec as the next line of the log and returns once it is
// written (and synced, if the writer can sync), sealed and mirrored. It
// fills in Seq and Prev, and Time with the current UTC time if it is zero;
// nothing else is added.
//
// ctx is consulted only while the log is still being verified in the
// background (see [Options].VerifyInBackground): Record waits for
// that, and if ctx ends first it returns an error and writes nothing.
// Nothing can have happened upstream yet that this record would be
// about, since every mutation's first record waits the same way. Once
// the log is verified, ctx is not consulted: a record of something that
// already happened upstream must not be dropped because the caller
// stopped waiting, and a local append is not worth interrupting.
func (l *Log) Record(ctx context.Context, rec proxmoxsafe.AuditRecord) error {
	if l.verified != nil {
		select {
		case <-l.verified:
		default:
			l.StartVerification() // held back until needed (Options.VerifyLater)
			if waitHook != nil {
				waitHook()
			}
			select {
			case <-l.verified:
			case <-ctx.Done():
				return fmt.Errorf("the audit log is still being verified, so nothing was recorded: %w", ctx.Err())
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("audit log is closed")
	}
	if l.verifyErr != nil {
		return fmt.Errorf("audit log refused: %w", l.verifyErr)
	}
	if l.err != nil {
		return fmt.Errorf("audit log failed earlier, refusing further records: %w", l.err)
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	rec.Format, rec.KeyID = "", "" // only the anchor carries them
	return l.append(func() ([][]byte, int64, error) {
		var lines [][]byte
		seq, prev := l.seq, l.prev
		if seq == 0 { // a stream's first record: the anchor goes first
			anchor, err := encodeLine(l.anchorRecord())
			if err != nil {
				return nil, 0, err
			}
			lines = append(lines, anchor)
			seq, prev = 1, l.chain.link(anchor[:len(anchor)-1])
		}
		rec.Seq, rec.Prev = seq+1, prev
		line, err := encodeLine(rec)
		return append(lines, line), rec.Seq, err
	})
}

// append writes the lines build returns (each ending in '\n', the last
// with Seq lastSeq) in one Write call, so that an O_APPEND file never
// interleaves them with anything else and a failure leaves at most one
// torn line; then syncs, seals and mirrors. For a file it holds the file's
// lock throughout and first catches up with records other processes
// appended, so build sees the true last Seq and link.
func (l *Log) append(build func() (lines [][]byte, lastSeq int64, err error)) error {
	if l.file != nil {
		if err := lockWait(l.file); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		defer localfile.Unlock(l.file)
		if err := l.catchUp(); err != nil {
			l.err = err
			return fmt.Errorf("audit log: %w", err)
		}
	}
	lines, lastSeq, err := build()
	if err != nil {
		// Nothing was written, so the chain is intact and the log stays usable.
		return fmt.Errorf("audit log: %w", err)
	}
	data := bytes.Join(lines, nil)
	n, err := l.w.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil && l.syncer != nil {
		err = l.syncer.Sync()
	}
	if err != nil {
		l.err = err
		return fmt.Errorf("audit log: %w", err)
	}
	last := lines[len(lines)-1]
	l.seq = lastSeq
	l.prev = l.chain.link(last[:len(last)-1])
	l.size += int64(len(data))
	if l.seal != nil {
		if err := l.seal.write(l.chain, sealState{Seq: l.seq, Size: l.size, Link: l.prev}); err != nil {
			// The line is on disk but its seal is not: the next open will
			// report the seal one record behind. Stop here.
			l.err = fmt.Errorf("writing the seal: %w", err)
			return fmt.Errorf("audit log: %w", l.err)
		}
	}
	if l.mirror != nil {
		if _, err := l.mirror.Write(data); err != nil {
			return fmt.Errorf("audit log mirror: %w (the record is in the log file)", err)
		}
	}
	return nil
}

// catchUp reads the records other processes appended to the file since
// this Log last wrote, verifying that they continue the chain, so the
// next record links to the true last line. The caller holds the lock.
func (l *Log) catchUp() error {
	st, err := l.file.Stat()
	if err != nil {
		return err
	}
	switch {
	case st.Size() == l.size:
		return nil
	case st.Size() < l.size:
		return fmt.Errorf("the log shrank from %d to %d bytes while open: it was truncated or replaced", l.size, st.Size())
	}
	v := &chainVerifier{chain: l.chain, lastSeq: l.seq, lastLink: l.prev, size: l.size}
	if err := v.run(io.NewSectionReader(l.file, l.size, st.Size()-l.size), 1); err != nil {
		return fmt.Errorf("records appended by another writer do not verify: %w", err)
	}
	l.seq, l.prev, l.size = v.lastSeq, v.lastLink, v.size
	return nil
}

// lockTimeout bounds how long Record waits for another process's append.
const lockTimeout = 10 * time.Second

// lockWait takes the file's lock, waiting for another process's append to
// finish (appends are short), but not forever.
func lockWait(f *os.File) error {
	deadline := time.Now().Add(lockTimeout)
	for {
		ok, err := localfile.TryLock(f)
		if err != nil {
			return fmt.Errorf("locking: %w", err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another process has held the log's lock for over %s", lockTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Close closes the file (and its seal) if [Open] opened it; a
// writer given to [New] stays open, since its owner may still need
// it. Later Record calls fail. Closing twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.stopVerify != nil {
		close(l.stopVerify)
		// A verification that never started (Options.VerifyLater) never
		// will: it ends here, as a stopped one does.
		l.startVerify.Do(func() {
			l.verifyErr = errVerifyStopped
			close(l.verified)
		})
		<-l.verified
	}
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}

// encodeLine returns rec as one JSON line ending in '\n'. HTML
// characters are not escaped so that reasons stay readable with grep; JSON
// escapes every control character and newline, so a line never splits.
func encodeLine(rec proxmoxsafe.AuditRecord) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	line := buf.Bytes() // Encode ends it with '\n'
	if len(line)-1 > MaxLineBytes {
		return nil, fmt.Errorf("record is %d bytes, over the %d-byte line limit", len(line)-1, MaxLineBytes)
	}
	return line, nil
}
