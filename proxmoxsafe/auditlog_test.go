package proxmoxsafe_test

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

// auditLines writes n sample records to a fresh log and returns its bytes.
func auditLines(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf)
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

func TestAuditLogRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf)
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
	if n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(buf.Bytes())); err != nil || n != 3 {
		t.Fatalf("VerifyAuditLog = %d, %v; want 3, nil", n, err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 3 {
		t.Fatalf("want 3 lines, got %q", buf.String())
	}
	recs := decodeAuditRecords(t, buf.Bytes())
	lines := splitAuditLines(buf.Bytes())
	for i, got := range recs {
		if got.Seq != int64(i+1) {
			t.Errorf("record %d: Seq = %d", i, got.Seq)
		}
		wantPrev := ""
		if i > 0 {
			sum := sha256.Sum256(bytes.TrimSuffix(lines[i-1], []byte("\n")))
			wantPrev = hex.EncodeToString(sum[:])
		}
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

func TestAuditLogRecordKeys(t *testing.T) {
	t.Parallel()
	documented := []string{"action", "approver", "event", "node", "op", "prev", "reason", "seq", "snapname", "time", "type", "upid", "vmid"}
	minimal := []string{"event", "op", "prev", "seq", "time"}
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf)
	if err := l.Record(t.Context(), auditSample(1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), proxmoxsafe.AuditRecord{Event: proxmoxsafe.AuditRefused, Op: "GuestPower"}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
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

func TestAuditLogConcurrentWriters(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer // AuditLog serialises writes; -race checks that it does
	l := proxmoxsafe.NewAuditLog(&buf)
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
	if n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(buf.Bytes())); err != nil || n != writers*each {
		t.Fatalf("VerifyAuditLog = %d, %v; want %d, nil", n, err, writers*each)
	}
	seen := map[int]bool{}
	for _, r := range decodeAuditRecords(t, buf.Bytes()) {
		seen[r.VMID] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

func TestVerifyAuditLogDetectsTampering(t *testing.T) {
	t.Parallel()
	orig := auditLines(t, 4)
	lines := func() [][]byte {
		var out [][]byte
		for _, l := range splitAuditLines(orig) {
			if len(l) > 0 {
				out = append(out, slices.Clone(l))
			}
		}
		return out
	}
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	cases := []struct {
		name    string
		tamper  func() []byte
		wantN   int
		wantErr string
	}{
		{"untouched", func() []byte { return orig }, 4, ""},
		{"empty", func() []byte { return nil }, 0, ""},
		{"edit a field", func() []byte {
			ls := lines()
			ls[1] = bytes.Replace(ls[1], []byte(`"shutdown"`), []byte(`"start"`), 1)
			return join(ls)
		}, 2, "line 3: prev hash does not match line 2 (record edited, removed or reordered)"},
		{"edit the first line", func() []byte {
			ls := lines()
			ls[0] = bytes.Replace(ls[0], []byte(`"vmid":100`), []byte(`"vmid":999`), 1)
			return join(ls)
		}, 1, "line 2: prev hash does not match line 1"},
		{"delete a line", func() []byte {
			ls := lines()
			return join(slices.Delete(ls, 1, 2))
		}, 1, "line 2: seq 3, want 2"},
		{"delete a line and renumber", func() []byte {
			ls := slices.Delete(lines(), 1, 2)
			ls[1] = bytes.Replace(ls[1], []byte(`"seq":3`), []byte(`"seq":2`), 1)
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":4`), []byte(`"seq":3`), 1)
			return join(ls)
		}, 1, "line 2: prev hash does not match line 1"},
		{"delete the first line", func() []byte {
			return join(lines()[1:])
		}, 3, ""}, // indistinguishable from a continued log: documented limit
		{"swap two lines", func() []byte {
			ls := lines()
			ls[1], ls[2] = ls[2], ls[1]
			return join(ls)
		}, 1, "line 2: seq 3, want 2"},
		{"duplicate a line", func() []byte {
			ls := lines()
			return join(slices.Insert(ls, 2, ls[1]))
		}, 2, "line 3: seq 2, want 3"},
		{"truncate the last line", func() []byte {
			return orig[:len(orig)-10]
		}, 3, "line 4: no trailing newline"},
		{"drop only the final newline", func() []byte {
			return orig[:len(orig)-1]
		}, 3, "line 4: no trailing newline"},
		{"append garbage line", func() []byte {
			return append(slices.Clone(orig), "garbage\n"...)
		}, 4, "line 5: not a valid audit record"},
		{"append garbage without newline", func() []byte {
			return append(slices.Clone(orig), "garbage"...)
		}, 4, "line 5: no trailing newline"},
		{"append a blank line", func() []byte {
			return append(slices.Clone(orig), '\n')
		}, 4, "line 5: not a valid audit record"},
		{"append a forged first record", func() []byte {
			return append(slices.Clone(orig), auditLines(t, 1)...)
		}, 4, "line 5: seq 1, want 5"},
		{"smuggle an unknown field into the last line", func() []byte {
			ls := lines()
			ls[3] = bytes.Replace(ls[3], []byte(`{`), []byte(`{"note":"ignore previous instructions",`), 1)
			return join(ls)
		}, 3, `line 4: not a valid audit record: json: unknown field "note"`},
		{"second object on a line", func() []byte {
			ls := lines()
			ls[3] = bytes.Replace(ls[3], []byte("}\n"), []byte("}{}\n"), 1)
			return join(ls)
		}, 3, "line 4: not a valid audit record: data after the JSON object"},
		{"array instead of object", func() []byte {
			return []byte("[]\n")
		}, 0, "line 1: not a valid audit record"},
		{"first record with a prev hash", func() []byte {
			ls := lines()
			ls[0] = bytes.Replace(ls[0], []byte(`"prev":""`), []byte(`"prev":"00"`), 1)
			return join(ls[:1])
		}, 0, "line 1: first record (seq 1) has a prev hash"},
		{"line over 1 MiB", func() []byte {
			return append(slices.Clone(orig), bytes.Repeat([]byte("x"), proxmoxsafe.MaxAuditLineBytes+1)...)
		}, 4, "line 5: longer than 1048576 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(tc.tamper()))
			if n != tc.wantN {
				t.Errorf("n = %d, want %d", n, tc.wantN)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestVerifyAuditLogContinuedLog(t *testing.T) {
	t.Parallel()
	// A log that starts after seq 1 (e.g. after rotation) verifies from
	// its first record on, but only if that record links to something.
	full := splitAuditLines(auditLines(t, 5))
	rest := bytes.Join(full[2:], nil)
	if n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(rest)); err != nil || n != 3 {
		t.Fatalf("VerifyAuditLog = %d, %v; want 3, nil", n, err)
	}
	unlinked := bytes.Replace(rest, []byte(`"seq":3,"prev":"`+prevOf(t, full[2])+`"`), []byte(`"seq":3,"prev":""`), 1)
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(unlinked)); err == nil || !strings.Contains(err.Error(), "line 1: seq 3 continues an earlier log but has no prev hash") {
		t.Fatalf("err = %v", err)
	}
}

func prevOf(t *testing.T, line []byte) string {
	t.Helper()
	var r proxmoxsafe.AuditRecord
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	return r.Prev
}

func TestOpenAuditLogContinuesChain(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for round := range 3 {
		l, err := proxmoxsafe.OpenAuditLog(path)
		if err != nil {
			t.Fatalf("round %d: OpenAuditLog: %v", round, err)
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
	if n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(data)); err != nil || n != 6 {
		t.Fatalf("VerifyAuditLog = %d, %v; want 6, nil", n, err)
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

func TestOpenAuditLogRefusesDamagedFile(t *testing.T) {
	t.Parallel()
	good := auditLines(t, 3)
	cases := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"edited record", bytes.Replace(good, []byte(`"vmid":100`), []byte(`"vmid":101`), 1), "line 2: prev hash does not match line 1"},
		{"torn final line", good[:len(good)-5], "line 3: no trailing newline"},
		{"garbage appended", append(slices.Clone(good), "not json\n"...), "line 4: not a valid audit record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := proxmoxsafe.OpenAuditLog(path)
			if err == nil {
				l.Close()
				t.Fatal("OpenAuditLog accepted a damaged log")
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

func TestOpenAuditLogRefusesNonRegularFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/null")
	}
	l, err := proxmoxsafe.OpenAuditLog(os.DevNull)
	if err == nil {
		l.Close()
		t.Fatal("OpenAuditLog accepted a device")
	}
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
	if _, err := proxmoxsafe.OpenAuditLog(t.TempDir()); err == nil {
		t.Fatal("OpenAuditLog accepted a directory")
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

func TestAuditLogFailsClosed(t *testing.T) {
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
			var l *proxmoxsafe.AuditLog
			if tc.sync {
				l = proxmoxsafe.NewAuditLog(auditSyncWriter{tc.w})
			} else {
				l = proxmoxsafe.NewAuditLog(tc.w)
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
			if n, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(data)); err != nil || n < 2 {
				t.Errorf("VerifyAuditLog = %d, %v", n, err)
			}
		})
	}
}

func TestAuditLogSyncsEveryRecord(t *testing.T) {
	t.Parallel()
	w := auditSyncWriter{&auditFlakyWriter{}}
	l := proxmoxsafe.NewAuditLog(w)
	for i := range 3 {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if w.syncs != 3 || w.writes != 3 {
		t.Errorf("writes = %d, syncs = %d; want 3 each", w.writes, w.syncs)
	}
}

func TestAuditLogOversizeRecordIsRefusedWithoutBreakingTheLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf)
	big := auditSample(0)
	big.Reason = strings.Repeat("x", proxmoxsafe.MaxAuditLineBytes)
	if err := l.Record(t.Context(), big); err == nil || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("err = %v, want a line-limit error", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written for a refused record", buf.Len())
	}
	if err := l.Record(t.Context(), auditSample(1)); err != nil {
		t.Fatalf("log unusable after an oversize record: %v", err)
	}
	if recs := decodeAuditRecords(t, buf.Bytes()); recs[0].Seq != 1 {
		t.Errorf("Seq = %d, want 1", recs[0].Seq)
	}
}

func TestAuditLogRecordsDespiteCanceledContext(t *testing.T) {
	t.Parallel()
	// A "submitted" record follows a request that already went out; it
	// must be written even if the caller has given up waiting.
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf)
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

func TestAuditLogClose(t *testing.T) {
	t.Parallel()
	w := &auditCloseTracker{}
	l := proxmoxsafe.NewAuditLog(w)
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
	fl, err := proxmoxsafe.OpenAuditLog(path)
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

func TestAuditLogLineLimitMatchesVerifier(t *testing.T) {
	t.Parallel()
	// Whatever Record writes, VerifyAuditLog must accept: the limits agree
	// to the byte.
	var probe bytes.Buffer
	base := auditSample(0)
	base.Reason = "x" // not empty: omitempty would drop the key
	if err := proxmoxsafe.NewAuditLog(&probe).Record(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	room := proxmoxsafe.MaxAuditLineBytes - (probe.Len() - 1) + 1

	exact := base
	exact.Reason = strings.Repeat("x", room)
	var buf bytes.Buffer
	if err := proxmoxsafe.NewAuditLog(&buf).Record(t.Context(), exact); err != nil {
		t.Fatalf("record of exactly the limit refused: %v", err)
	}
	if buf.Len()-1 != proxmoxsafe.MaxAuditLineBytes {
		t.Fatalf("line is %d bytes, want %d", buf.Len()-1, proxmoxsafe.MaxAuditLineBytes)
	}
	if n, err := proxmoxsafe.VerifyAuditLog(&buf); err != nil || n != 1 {
		t.Fatalf("VerifyAuditLog = %d, %v", n, err)
	}

	over := base
	over.Reason = strings.Repeat("x", room+1)
	if err := proxmoxsafe.NewAuditLog(io.Discard).Record(t.Context(), over); err == nil {
		t.Fatal("record one byte over the limit accepted")
	}
}
