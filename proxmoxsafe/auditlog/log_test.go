package auditlog_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// auditSample returns a record with every field the caller may set filled in.
func auditSample(i int) proxmoxsafe.AuditRecord {
	return proxmoxsafe.AuditRecord{
		Time:     time.Date(2026, 8, 21, 12, 0, i, 0, time.UTC),
		Event:    proxmoxsafe.AuditSubmitted,
		Op:       "GuestPower",
		Action:   "shutdown",
		Node:     "pve1",
		Type:     "qemu",
		VMID:     100 + i,
		Snapshot: "before-upgrade",
		Reason:   fmt.Sprintf("reason %d <with> \"quotes\" & a\nnewline", i),
		UPID:     "UPID:pve1:00000B6E:0000D071:5FBE5E6D:qmshutdown:101:root@pam:",
		Approver: "phrase",
	}
}

// auditLines writes n sample records to a fresh stream log keyed with key
// (nil: no key) and returns its bytes.
func auditLines(t *testing.T, key []byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	l := auditlog.New(&buf, &auditlog.Options{Key: key})
	for i := range n {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatalf("Record %d: %v", i, err)
		}
	}
	return buf.Bytes()
}

func splitAuditLines(b []byte) [][]byte {
	return bytes.SplitAfter(b, []byte("\n"))
}

func decodeAuditRecords(t *testing.T, b []byte) []proxmoxsafe.AuditRecord {
	t.Helper()
	var recs []proxmoxsafe.AuditRecord
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var r proxmoxsafe.AuditRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestLogRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := auditlog.New(&buf, nil)
	given := []proxmoxsafe.AuditRecord{
		auditSample(1),
		{Event: proxmoxsafe.AuditRefused, Op: "SnapshotGuest", Reason: "locked (backup)"}, // zero Time
		auditSample(3),
	}
	before := time.Now()
	for _, r := range given {
		if err := l.Record(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := auditlog.Verify(bytes.NewReader(buf.Bytes()), nil); err != nil || sum.Records != 4 || sum.Keyed {
		t.Fatalf("Verify = %+v, %v; want 4 unkeyed records (anchor + 3), nil", sum, err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 4 {
		t.Fatalf("want 4 lines, got %q", buf.String())
	}
	all := decodeAuditRecords(t, buf.Bytes())
	if a := all[0]; a.Event != proxmoxsafe.AuditAnchor || a.Seq != 1 || a.Prev != "" || a.Format != auditlog.Format || a.KeyID != "" {
		t.Errorf("first line is not an unkeyed anchor: %+v", a)
	}
	recs := all[1:]
	lines := splitAuditLines(buf.Bytes())
	for i, got := range recs {
		if got.Seq != int64(i+2) {
			t.Errorf("record %d: Seq = %d", i, got.Seq)
		}
		sum := sha256.Sum256(bytes.TrimSuffix(lines[i], []byte("\n")))
		wantPrev := hex.EncodeToString(sum[:])
		if got.Prev != wantPrev {
			t.Errorf("record %d: Prev = %q, want %q", i, got.Prev, wantPrev)
		}
		want := given[i]
		if want.Time.IsZero() {
			if got.Time.Location() != time.UTC || got.Time.Before(before.Add(-time.Second)) || got.Time.After(time.Now().Add(time.Second)) {
				t.Errorf("record %d: defaulted Time = %v, want now in UTC", i, got.Time)
			}
			want.Time = got.Time
		}
		want.Seq, want.Prev = got.Seq, got.Prev
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// HTML characters are written as they are, consistently.
	if !bytes.Contains(buf.Bytes(), []byte(`<with> \"quotes\" & a\nnewline`)) {
		t.Errorf("reason not written verbatim without HTML escaping: %s", buf.Bytes())
	}
}

func TestLogRecordKeys(t *testing.T) {
	t.Parallel()
	documented := []string{"action", "approver", "event", "node", "op", "prev", "reason", "seq", "snapname", "time", "type", "upid", "vmid"}
	minimal := []string{"event", "op", "prev", "seq", "time"}
	var buf bytes.Buffer
	l := auditlog.New(&buf, nil)
	if err := l.Record(t.Context(), auditSample(1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), proxmoxsafe.AuditRecord{Event: proxmoxsafe.AuditRefused, Op: "GuestPower"}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))[1:] // after the anchor
	for i, want := range [][]string{documented, minimal} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(lines[i], &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("line %d keys = %v, want %v", i+1, keys, want)
		}
	}
}

func TestLogConcurrentWriters(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer // a Log serialises writes; -race checks that it does
	l := auditlog.New(&buf, nil)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := auditSample(i)
				r.VMID = w*1000 + i
				if err := l.Record(context.Background(), r); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if sum, err := auditlog.Verify(bytes.NewReader(buf.Bytes()), nil); err != nil || sum.Records != writers*each+1 {
		t.Fatalf("Verify = %+v, %v; want %d, nil", sum, err, writers*each+1)
	}
	seen := map[int]bool{}
	for _, r := range decodeAuditRecords(t, buf.Bytes())[1:] {
		seen[r.VMID] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

func TestOpenContinuesChain(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for round := range 3 {
		l, err := auditlog.Open(path, nil)
		if err != nil {
			t.Fatalf("round %d: Open: %v", round, err)
		}
		for i := range 2 {
			if err := l.Record(t.Context(), auditSample(round*10+i)); err != nil {
				t.Fatalf("round %d: Record: %v", round, err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := auditlog.VerifyFile(path, nil); err != nil || sum.Records != 7 || !sum.Sealed {
		t.Fatalf("VerifyFile = %+v, %v; want 7 sealed records, nil", sum, err)
	}
	for i, r := range decodeAuditRecords(t, data) {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d: Seq = %d", i, r.Seq)
		}
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("mode = %v, want no group/other access", perm)
		}
	}
}

func TestOpenRefusesDamagedFile(t *testing.T) {
	t.Parallel()
	cases := damagedAuditLogs(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeFile(t, path, tc.data)
			l, err := auditlog.Open(path, nil)
			if err == nil {
				l.Close()
				t.Fatal("Open accepted a damaged log")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want it to name %s and contain %q", err, path, tc.wantErr)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, tc.data) {
				t.Error("the refused file was modified")
			}
		})
	}
}

func TestOpenRefusesNonRegularFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/null")
	}
	l, err := auditlog.Open(os.DevNull, nil)
	if err == nil {
		l.Close()
		t.Fatal("Open accepted a device")
	}
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
	if _, err := auditlog.Open(t.TempDir(), nil); err == nil {
		t.Fatal("Open accepted a directory")
	}
}

// auditFlakyWriter fails the writes whose 1-based index is in fail, and can
// write only part of a line on a short write.
type auditFlakyWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  int
	fail    map[int]bool
	short   bool // on failure, write half the line and return no error
	syncErr error
	syncs   int
}

func (w *auditFlakyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.fail[w.writes] {
		if w.short {
			w.buf.Write(p[:len(p)/2])
			return len(p) / 2, nil
		}
		w.buf.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("disk full")
	}
	return w.buf.Write(p)
}

type auditSyncWriter struct{ *auditFlakyWriter }

func (w auditSyncWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.syncs++
	return w.syncErr
}

func TestLogFailsClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		w    *auditFlakyWriter
		sync bool
	}{
		{"write error", &auditFlakyWriter{fail: map[int]bool{3: true}}, false},
		{"short write", &auditFlakyWriter{fail: map[int]bool{3: true}, short: true}, false},
		{"sync error", &auditFlakyWriter{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var l *auditlog.Log
			if tc.sync {
				l = auditlog.New(auditSyncWriter{tc.w}, nil)
			} else {
				l = auditlog.New(tc.w, nil)
			}
			for i := range 2 {
				if err := l.Record(t.Context(), auditSample(i)); err != nil {
					t.Fatalf("Record %d: %v", i, err)
				}
			}
			if tc.sync {
				tc.w.syncErr = errors.New("fsync: input/output error")
			}
			if err := l.Record(t.Context(), auditSample(2)); err == nil {
				t.Fatal("Record succeeded on a failing writer")
			}
			// The writer recovers, but the log must not: a later line would
			// chain onto a record that may be torn or missing.
			tc.w.fail, tc.w.syncErr = nil, nil
			for i := range 3 {
				err := l.Record(t.Context(), auditSample(3+i))
				if err == nil || !strings.Contains(err.Error(), "failed earlier") {
					t.Fatalf("Record after failure: err = %v, want it refused", err)
				}
			}
			writes := tc.w.writes
			if writes != 3 {
				t.Errorf("%d writes reached the writer, want 3", writes)
			}
			// What reached the writer before the failure still verifies.
			data := tc.w.buf.Bytes()
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 && !tc.sync {
				data = data[:i+1] // drop the torn half line
			}
			if sum, err := auditlog.Verify(bytes.NewReader(data), nil); err != nil || sum.Records < 3 {
				t.Errorf("Verify = %+v, %v", sum, err)
			}
		})
	}
}

func TestLogSyncsEveryRecord(t *testing.T) {
	t.Parallel()
	w := auditSyncWriter{&auditFlakyWriter{}}
	l := auditlog.New(w, nil)
	for i := range 3 {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if w.syncs != 3 || w.writes != 3 {
		t.Errorf("writes = %d, syncs = %d; want 3 each", w.writes, w.syncs)
	}
}

func TestLogOversizeRecordIsRefusedWithoutBreakingTheLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := auditlog.New(&buf, nil)
	big := auditSample(0)
	big.Reason = strings.Repeat("x", auditlog.MaxLineBytes)
	if err := l.Record(t.Context(), big); err == nil || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("err = %v, want a line-limit error", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written for a refused record", buf.Len())
	}
	if err := l.Record(t.Context(), auditSample(1)); err != nil {
		t.Fatalf("log unusable after an oversize record: %v", err)
	}
	if recs := decodeAuditRecords(t, buf.Bytes()); recs[0].Event != proxmoxsafe.AuditAnchor || recs[1].Seq != 2 {
		t.Errorf("records = %+v, want the anchor then Seq 2", recs)
	}
}

func TestLogRecordsDespiteCanceledContext(t *testing.T) {
	t.Parallel()
	// A "submitted" record follows a request that already went out; it
	// must be written even if the caller has given up waiting.
	var buf bytes.Buffer
	l := auditlog.New(&buf, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Record(ctx, auditSample(0)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() == 0 {
		t.Fatal("nothing written")
	}
}

type auditCloseTracker struct {
	bytes.Buffer
	closed bool
}

func (c *auditCloseTracker) Close() error { c.closed = true; return nil }

func TestLogClose(t *testing.T) {
	t.Parallel()
	w := &auditCloseTracker{}
	l := auditlog.New(w, nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if w.closed {
		t.Error("Close closed a writer it did not open")
	}
	if err := l.Record(t.Context(), auditSample(0)); err == nil {
		t.Error("Record after Close succeeded")
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	path := filepath.Join(t.TempDir(), "audit.jsonl")
	fl, err := auditlog.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.Record(t.Context(), auditSample(0)); err != nil {
		t.Fatal(err)
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fl.Record(t.Context(), auditSample(1)); err == nil {
		t.Error("Record after Close succeeded")
	}
	if err := fl.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLogLineLimitMatchesVerifier(t *testing.T) {
	t.Parallel()
	// Whatever Record writes, Verify must accept: the limits agree
	// to the byte.
	var probe bytes.Buffer
	base := auditSample(0)
	base.Reason = "x" // not empty: omitempty would drop the key
	if err := auditlog.New(&probe, nil).Record(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	probeLine := probe.Bytes()[bytes.IndexByte(probe.Bytes(), '\n')+1:] // after the anchor
	room := auditlog.MaxLineBytes - (len(probeLine) - 1) + 1

	exact := base
	exact.Reason = strings.Repeat("x", room)
	var buf bytes.Buffer
	if err := auditlog.New(&buf, nil).Record(t.Context(), exact); err != nil {
		t.Fatalf("record of exactly the limit refused: %v", err)
	}
	if last := splitAuditLines(buf.Bytes())[1]; len(last)-1 != auditlog.MaxLineBytes {
		t.Fatalf("line is %d bytes, want %d", len(last)-1, auditlog.MaxLineBytes)
	}
	if sum, err := auditlog.Verify(&buf, nil); err != nil || sum.Records != 2 {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}

	over := base
	over.Reason = strings.Repeat("x", room+1)
	if err := auditlog.New(io.Discard, nil).Record(t.Context(), over); err == nil {
		t.Fatal("record one byte over the limit accepted")
	}
}

// damagedAudit is an audit log with one kind of damage, and the error
// opening it must report.
type damagedAudit struct {
	name    string
	data    []byte
	wantErr string
}

// damagedAuditLogs are the damaged logs both the synchronous and the
// background open must refuse.
func damagedAuditLogs(t *testing.T) []damagedAudit {
	t.Helper()
	good := auditLines(t, nil, 3)
	return []damagedAudit{
		{"edited record", bytes.Replace(good, []byte(`"vmid":100`), []byte(`"vmid":101`), 1), "line 3: prev hash does not match line 2"},
		{"torn final line", good[:len(good)-5], "line 4: no trailing newline"},
		{"garbage appended", append(slices.Clone(good), "not json\n"...), "line 5: not a valid audit record"},
	}
}

func TestOpenRefusesEmptiedLog(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 2)
	writeFile(t, path, nil)
	if l, err := auditlog.Open(path, keyed()); err == nil {
		l.Close()
		t.Fatal("Open started over in an emptied log that has a seal")
	}
}

func TestOpenKeyMismatch(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 1)
	for name, opts := range map[string]*auditlog.Options{
		"no key":      nil,
		"another key": {Key: bytes.Repeat([]byte{3}, 32)},
	} {
		l, err := auditlog.Open(path, opts)
		if err == nil {
			l.Close()
			t.Fatalf("%s: Open accepted", name)
		}
		if !errors.Is(err, auditlog.ErrKey) {
			t.Errorf("%s: err = %v, want ErrKey", name, err)
		}
	}
}

// TestLogTwoWriters: two AuditLogs on one file (as two processes on
// one host with the default path) take turns under the file lock and each
// continues the chain after the other's records.
func TestLogTwoWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := auditlog.Open(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := auditlog.Open(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const each = 40
	var wg sync.WaitGroup
	for _, l := range []*auditlog.Log{a, b} {
		wg.Go(func() {
			for i := range each {
				if err := l.Record(t.Context(), auditSample(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if sum, err := auditlog.VerifyFile(path, verifyKeyed()); err != nil || sum.Records != 2*each+1 || !sum.Sealed {
		t.Fatalf("VerifyFile = %+v, %v; want %d sealed records", sum, err, 2*each+1)
	}
}

type failingMirror struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	fail bool
}

func (m *failingMirror) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return 0, errors.New("syslog unreachable")
	}
	return m.buf.Write(p)
}

func TestLogMirror(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	m := &failingMirror{}
	l, err := auditlog.Open(path, &auditlog.Options{Key: testAuditKey, Mirror: m})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 2 {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(m.buf.Bytes(), readFile(t, path)) {
		t.Fatalf("mirror holds\n%s\nthe file\n%s", m.buf.Bytes(), readFile(t, path))
	}
	m.fail = true
	if err := l.Record(t.Context(), auditSample(2)); err == nil || !strings.Contains(err.Error(), "mirror") {
		t.Fatalf("err = %v, want the mirror failure", err)
	}
	m.fail = false
	if err := l.Record(t.Context(), auditSample(3)); err != nil {
		t.Fatalf("Record after a mirror failure: %v", err)
	}
	// The copy has a gap where the mirror failed; the file does not.
	if _, err := auditlog.Verify(bytes.NewReader(m.buf.Bytes()), verifyKeyed()); err == nil || !strings.Contains(err.Error(), "seq 5, want 4") {
		t.Errorf("mirror copy verify err = %v, want the gap", err)
	}
	if _, err := auditlog.VerifyFile(path, verifyKeyed()); err != nil {
		t.Error(err)
	}
}

// TestLogAnchorKeepsItsOp: the anchor record names the operation as it did
// before this package existed ("OpenAuditLog"), for a stream and a file
// alike, so that the line format, and whatever matches it, stay as they
// were.
func TestLogAnchorKeepsItsOp(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := auditlog.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	for name, b := range map[string][]byte{"stream": auditLines(t, nil, 1), "file": readFile(t, path)} {
		a := decodeAuditRecords(t, b)[0]
		if a.Event != proxmoxsafe.AuditAnchor || a.Op != "OpenAuditLog" || a.Format != auditlog.Format || a.Reason != "log created" {
			t.Errorf("%s: anchor = %+v, want op OpenAuditLog", name, a)
		}
	}
}
