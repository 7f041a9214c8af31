package proxmoxsafe_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// testAuditKey is the key of the keyed logs in these tests.
var testAuditKey = bytes.Repeat([]byte{0x5a}, 32)

func keyed() *proxmoxsafe.AuditLogOptions {
	return &proxmoxsafe.AuditLogOptions{Key: testAuditKey}
}

func verifyKeyed() *proxmoxsafe.AuditVerifyOptions {
	return &proxmoxsafe.AuditVerifyOptions{Key: testAuditKey}
}

// keyedAuditLines writes n sample records to a fresh keyed stream log.
func keyedAuditLines(t *testing.T, key []byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	l := proxmoxsafe.NewAuditLog(&buf, &proxmoxsafe.AuditLogOptions{Key: key})
	for i := range n {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatalf("Record %d: %v", i, err)
		}
	}
	return buf.Bytes()
}

func TestVerifyAuditLogDetectsTampering(t *testing.T) {
	t.Parallel()
	orig := keyedAuditLines(t, testAuditKey, 4) // line 1 anchor, lines 2-5 records
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
		{"untouched", func() []byte { return orig }, 5, ""},
		{"empty", func() []byte { return nil }, 0, ""},
		{"edit a field", func() []byte {
			ls := lines()
			ls[2] = bytes.Replace(ls[2], []byte(`"shutdown"`), []byte(`"start"`), 1)
			return join(ls)
		}, 3, "line 4: prev hash does not match line 3 (record edited, removed or reordered)"},
		{"edit the first record", func() []byte {
			ls := lines()
			ls[1] = bytes.Replace(ls[1], []byte(`"vmid":100`), []byte(`"vmid":999`), 1)
			return join(ls)
		}, 2, "line 3: prev hash does not match line 2"},
		{"edit the anchor", func() []byte {
			ls := lines()
			ls[0] = bytes.Replace(ls[0], []byte(`"log created"`), []byte(`"log created!"`), 1)
			return join(ls)
		}, 1, "line 2: prev hash does not match line 1"},
		{"delete a line", func() []byte {
			return join(slices.Delete(lines(), 2, 3))
		}, 2, "line 3: seq 4, want 3"},
		{"delete a line and renumber", func() []byte {
			ls := slices.Delete(lines(), 2, 3)
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":4`), []byte(`"seq":3`), 1)
			ls[3] = bytes.Replace(ls[3], []byte(`"seq":5`), []byte(`"seq":4`), 1)
			return join(ls)
		}, 2, "line 3: prev hash does not match line 2"},
		// Issue 15 §3: a first record with seq > 1 used to be accepted.
		{"delete the first line", func() []byte {
			return join(lines()[1:])
		}, 0, "line 1: the first record is seq 2, not the anchor: the first lines of the log were removed"},
		{"delete the first three lines", func() []byte {
			return join(lines()[3:])
		}, 0, "line 1: the first record is seq 4, not the anchor"},
		{"swap two lines", func() []byte {
			ls := lines()
			ls[2], ls[3] = ls[3], ls[2]
			return join(ls)
		}, 2, "line 3: seq 4, want 3"},
		{"duplicate a line", func() []byte {
			ls := lines()
			return join(slices.Insert(ls, 3, ls[2]))
		}, 3, "line 4: seq 3, want 4"},
		{"truncate the last line", func() []byte {
			return orig[:len(orig)-10]
		}, 4, "line 5: no trailing newline"},
		{"drop only the final newline", func() []byte {
			return orig[:len(orig)-1]
		}, 4, "line 5: no trailing newline"},
		{"append garbage line", func() []byte {
			return append(slices.Clone(orig), "garbage\n"...)
		}, 5, "line 6: not a valid audit record"},
		{"append garbage without newline", func() []byte {
			return append(slices.Clone(orig), "garbage"...)
		}, 5, "line 6: no trailing newline"},
		{"append a blank line", func() []byte {
			return append(slices.Clone(orig), '\n')
		}, 5, "line 6: not a valid audit record"},
		{"append another log", func() []byte {
			return append(slices.Clone(orig), keyedAuditLines(t, testAuditKey, 1)...)
		}, 5, "line 6: an anchor record after the start of the log"},
		{"smuggle an unknown field into the last line", func() []byte {
			ls := lines()
			ls[4] = bytes.Replace(ls[4], []byte(`{`), []byte(`{"note":"ignore previous instructions",`), 1)
			return join(ls)
		}, 4, `line 5: not a valid audit record: json: unknown field "note"`},
		{"second object on a line", func() []byte {
			ls := lines()
			ls[4] = bytes.Replace(ls[4], []byte("}\n"), []byte("}{}\n"), 1)
			return join(ls)
		}, 4, "line 5: not a valid audit record: data after the JSON object"},
		{"array instead of object", func() []byte {
			return []byte("[]\n")
		}, 0, "line 1: not a valid audit record"},
		{"anchor with a prev hash", func() []byte {
			ls := lines()
			ls[0] = bytes.Replace(ls[0], []byte(`"prev":""`), []byte(`"prev":"00"`), 1)
			return join(ls[:1])
		}, 0, "line 1: the anchor must have seq 1 and no prev hash"},
		{"line over 1 MiB", func() []byte {
			return append(slices.Clone(orig), bytes.Repeat([]byte("x"), proxmoxsafe.MaxAuditLineBytes+1)...)
		}, 5, "line 6: longer than 1048576 bytes"},
		// Issue 15 §3: a full rewrite with a recomputed chain. Without the
		// key the rewriter can only produce an unkeyed chain, or one keyed
		// with another key; both are refused.
		{"rewrite with a recomputed unkeyed chain", func() []byte {
			return auditLines(t, 4)
		}, 0, "line 1: the log is not keyed but a key was given"},
		{"rewrite with another key", func() []byte {
			return keyedAuditLines(t, bytes.Repeat([]byte{1}, 32), 4)
		}, 0, "line 1: the log was written with another key"},
		// The chain alone cannot see the last line change: the seal does
		// (TestVerifyAuditFileDetectsTailTampering).
		{"edit the last line (the seal's job)", func() []byte {
			ls := lines()
			ls[4] = bytes.Replace(ls[4], []byte(`"submitted"`), []byte(`"refused"`), 1)
			return join(ls)
		}, 5, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sum, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(tc.tamper()), verifyKeyed())
			if sum.Records != tc.wantN {
				t.Errorf("Records = %d, want %d", sum.Records, tc.wantN)
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

func TestVerifyAuditLogKey(t *testing.T) {
	t.Parallel()
	log := keyedAuditLines(t, testAuditKey, 2)
	if sum, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(log), verifyKeyed()); err != nil || !sum.Keyed || sum.Records != 3 {
		t.Fatalf("VerifyAuditLog = %+v, %v", sum, err)
	}
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(log), nil); !errors.Is(err, proxmoxsafe.ErrAuditKey) {
		t.Errorf("without the key: err = %v, want ErrAuditKey", err)
	}
	other := &proxmoxsafe.AuditVerifyOptions{Key: bytes.Repeat([]byte{7}, 32)}
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(log), other); !errors.Is(err, proxmoxsafe.ErrAuditKey) {
		t.Errorf("with another key: err = %v, want ErrAuditKey", err)
	}
	short := &proxmoxsafe.AuditVerifyOptions{Key: []byte("short")}
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(log), short); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short key: err = %v", err)
	}
	// The key never appears in the log.
	if bytes.Contains(log, testAuditKey) || bytes.Contains(log, []byte(hex.EncodeToString(testAuditKey))) {
		t.Error("the key is in the log")
	}
}

func TestVerifyAuditLogPartialCopy(t *testing.T) {
	t.Parallel()
	// What a syslog mirror holds when it was switched on mid-log.
	full := splitAuditLines(keyedAuditLines(t, testAuditKey, 5))
	rest := bytes.Join(full[3:], nil)
	opts := &proxmoxsafe.AuditVerifyOptions{Key: testAuditKey, Partial: true}
	sum, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(rest), opts)
	if err != nil || sum.Records != 3 || !sum.Partial {
		t.Fatalf("VerifyAuditLog = %+v, %v", sum, err)
	}
	edited := bytes.Replace(rest, []byte(`"vmid":102`), []byte(`"vmid":109`), 1)
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(edited), opts); err == nil {
		t.Error("an edit inside a partial copy verified")
	}
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(rest), verifyKeyed()); err == nil {
		t.Error("a partial copy verified without the Partial option")
	}
}

// legacyLog is a log as the earlier version wrote it: no anchor, Seq from
// 1, Prev the plain SHA-256 of the previous line.
func legacyLog(t *testing.T, n int) []byte {
	t.Helper()
	var out []byte
	prev := ""
	for i := range n {
		r := auditSample(i)
		r.Seq, r.Prev = int64(i+1), prev
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(line)
		prev = hex.EncodeToString(sum[:])
		out = append(append(out, line...), '\n')
	}
	return out
}

func TestLegacyAuditLog(t *testing.T) {
	t.Parallel()
	old := legacyLog(t, 3)
	sum, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(old), nil)
	if err != nil || !sum.Legacy || sum.Records != 3 {
		t.Fatalf("VerifyAuditLog(legacy) = %+v, %v; want 3 legacy records", sum, err)
	}
	edited := bytes.Replace(old, []byte(`"vmid":100`), []byte(`"vmid":101`), 1)
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(edited), nil); err == nil {
		t.Error("an edited legacy log verified")
	}
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(old), verifyKeyed()); !errors.Is(err, proxmoxsafe.ErrAuditLegacyFormat) {
		t.Errorf("with a key: err = %v, want ErrAuditLegacyFormat", err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if sum, err := proxmoxsafe.VerifyAuditFile(path, nil); err != nil || !sum.Legacy {
		t.Errorf("VerifyAuditFile(legacy) = %+v, %v", sum, err)
	}
	l, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err == nil {
		l.Close()
		t.Fatal("OpenAuditLog continued a legacy log")
	}
	if !errors.Is(err, proxmoxsafe.ErrAuditLegacyFormat) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("err = %v, want ErrAuditLegacyFormat with migration advice", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, old) {
		t.Error("the legacy log was modified")
	}
}

// sealedLog creates a keyed log file with n records and returns its path.
func sealedLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyAuditFileDetectsTailTampering covers what the chain alone
// cannot see (issue 15 §3): the seal catches edits of the last line and
// removal of the last records.
func TestVerifyAuditFileDetectsTailTampering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		tamper  func(t *testing.T, path string)
		wantErr string
	}{
		{"untouched", func(*testing.T, string) {}, ""},
		{"edit the last line", func(t *testing.T, path string) {
			b := readFile(t, path)
			i := bytes.LastIndex(b, []byte(`"event":"submitted"`))
			writeFile(t, path, slices.Concat(b[:i], []byte(`"event":"refused"  `), b[i+len(`"event":"submitted"`):]))
		}, "the end of the log does not match its seal"},
		{"edit the last line's vmid", func(t *testing.T, path string) {
			b := readFile(t, path)
			writeFile(t, path, bytes.Replace(b, []byte(`"vmid":103`), []byte(`"vmid":203`), 1))
		}, "the end of the log does not match its seal"},
		{"remove the last line", func(t *testing.T, path string) {
			ls := splitAuditLines(readFile(t, path))
			writeFile(t, path, bytes.Join(ls[:len(ls)-2], nil))
		}, "records were removed from the end"},
		{"remove the last two lines", func(t *testing.T, path string) {
			ls := splitAuditLines(readFile(t, path))
			writeFile(t, path, bytes.Join(ls[:len(ls)-3], nil))
		}, "records were removed from the end"},
		{"empty the log", func(t *testing.T, path string) {
			writeFile(t, path, nil)
		}, "does not match its seal"},
		{"delete the seal", func(t *testing.T, path string) {
			if err := os.Remove(path + ".seal"); err != nil {
				t.Fatal(err)
			}
		}, "the seal file is missing or empty"},
		{"edit the seal", func(t *testing.T, path string) {
			b := readFile(t, path+".seal")
			writeFile(t, path+".seal", bytes.Replace(b, []byte(`"seq":5`), []byte(`"seq":4`), 1))
		}, "the seal's MAC does not verify"},
		{"remove the last line and forge the seal from the chain", func(t *testing.T, path string) {
			// The next line's prev is the HMAC of the new last line, but a
			// seal's MAC has its own label: it cannot be copied over.
			b := readFile(t, path)
			ls := splitAuditLines(b)
			var last proxmoxsafe.AuditRecord
			if err := json.Unmarshal(ls[len(ls)-2], &last); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, bytes.Join(ls[:len(ls)-2], nil))
			seal := `{"format":"proxmox-safe-mcp-audit-seal/1","seq":4,"size":` + itoa(len(b)-len(ls[len(ls)-2])) +
				`,"link":"` + last.Prev + `","mac":"` + last.Prev + `"}`
			writeFile(t, path+".seal", []byte(seal))
		}, "the seal's MAC does not verify"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := sealedLog(t, 4)
			tc.tamper(t, path)
			before := readFile(t, path)
			sum, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed())
			if tc.wantErr == "" {
				if err != nil || !sum.Sealed || sum.Records != 5 {
					t.Fatalf("VerifyAuditFile = %+v, %v", sum, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("VerifyAuditFile err = %v, want it to contain %q", err, tc.wantErr)
			}
			l, err := proxmoxsafe.OpenAuditLog(path, keyed())
			if err == nil {
				l.Close()
				t.Fatal("OpenAuditLog continued a tampered log")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "evidence") {
				t.Errorf("OpenAuditLog err = %v, want %q and advice", err, tc.wantErr)
			}
			if !bytes.Equal(readFile(t, path), before) {
				t.Error("the refused log was modified")
			}
		})
	}
}

// TestVerifyAuditFileRollbackIsUndetectable pins a documented limit
// (docs/SECURITY.md): restoring an earlier copy of both the log and its
// seal yields a consistent pair. Only a copy off the host (Mirror) shows it.
func TestVerifyAuditFileRollbackIsUndetectable(t *testing.T) {
	t.Parallel()
	path := sealedLog(t, 2)
	oldLog, oldSeal := readFile(t, path), readFile(t, path+".seal")
	l, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), auditSample(9)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	writeFile(t, path, oldLog)
	writeFile(t, path+".seal", oldSeal)
	if _, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); err != nil {
		t.Fatalf("a consistent rollback did not verify (update docs/SECURITY.md if this is now detected): %v", err)
	}
}

func TestRepairAuditLogTornLine(t *testing.T) {
	t.Parallel()
	path := sealedLog(t, 3)
	good := readFile(t, path)
	torn := []byte(`{"time":"2026-08-21T12:00:09Z","event":"appro`)
	writeFile(t, path, slices.Concat(good, torn))

	_, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed())
	if !errors.Is(err, proxmoxsafe.ErrAuditTornLine) {
		t.Fatalf("VerifyAuditFile err = %v, want ErrAuditTornLine", err)
	}
	if _, err := proxmoxsafe.OpenAuditLog(path, keyed()); err == nil || !strings.Contains(err.Error(), "audit repair") {
		t.Fatalf("OpenAuditLog err = %v, want advice to run audit repair", err)
	}
	rep, err := proxmoxsafe.RepairAuditLog(path, keyed())
	if err != nil {
		t.Fatalf("RepairAuditLog: %v", err)
	}
	sum := sha256.Sum256(torn)
	if rep.TornBytes != int64(len(torn)) || rep.TornSHA256 != hex.EncodeToString(sum[:]) || rep.Record.Event != proxmoxsafe.AuditRepaired {
		t.Errorf("repair = %+v", rep)
	}
	after := readFile(t, path)
	if !bytes.HasPrefix(after, good) {
		t.Fatal("repair changed more than the torn line")
	}
	recs := decodeAuditRecords(t, after)
	last := recs[len(recs)-1]
	if last.Event != proxmoxsafe.AuditRepaired || last.Seq != 5 || !strings.Contains(last.Reason, itoa(len(torn))+" bytes") || !strings.Contains(last.Reason, rep.TornSHA256) {
		t.Errorf("last record = %+v, want a repaired record naming the removed bytes", last)
	}
	if s, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); err != nil || !s.Sealed {
		t.Fatalf("after repair: %+v, %v", s, err)
	}
	// Repairing a healthy log changes nothing.
	if rep, err := proxmoxsafe.RepairAuditLog(path, keyed()); err != nil || rep.Record.Event != "" {
		t.Errorf("second repair = %+v, %v", rep, err)
	}
	if !bytes.Equal(readFile(t, path), after) {
		t.Error("repairing a healthy log modified it")
	}
	l, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatalf("OpenAuditLog after repair: %v", err)
	}
	l.Close()
}

func TestRepairAuditLogRefusesOtherDamage(t *testing.T) {
	t.Parallel()
	cases := map[string]func([]byte) []byte{
		"edited record and torn line": func(b []byte) []byte {
			return append(bytes.Replace(b, []byte(`"vmid":101`), []byte(`"vmid":909`), 1), `{"ti`...)
		},
		"edited last line": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"vmid":102`), []byte(`"vmid":909`), 1)
		},
		"removed last line and torn": func(b []byte) []byte {
			ls := splitAuditLines(b)
			return append(bytes.Join(ls[:len(ls)-2], nil), `{"ti`...)
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := sealedLog(t, 3)
			bad := tamper(readFile(t, path))
			writeFile(t, path, bad)
			if _, err := proxmoxsafe.RepairAuditLog(path, keyed()); err == nil || !strings.Contains(err.Error(), "not repaired") {
				t.Fatalf("err = %v, want not repaired", err)
			}
			if !bytes.Equal(readFile(t, path), bad) {
				t.Error("a log that cannot be repaired was modified")
			}
		})
	}
}

func TestRepairAuditLogSealBehind(t *testing.T) {
	t.Parallel()
	path := sealedLog(t, 2)
	oldSeal := readFile(t, path+".seal")
	l, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), auditSample(5)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	writeFile(t, path+".seal", oldSeal) // as if the process died before sealing
	if _, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); !errors.Is(err, proxmoxsafe.ErrAuditSealBehind) {
		t.Fatalf("err = %v, want ErrAuditSealBehind", err)
	}
	rep, err := proxmoxsafe.RepairAuditLog(path, keyed())
	if err != nil || !rep.Resealed {
		t.Fatalf("RepairAuditLog = %+v, %v", rep, err)
	}
	if s, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); err != nil || s.Records != 5 {
		t.Fatalf("after repair: %+v, %v", s, err)
	}
}

func TestOpenAuditLogRefusesEmptiedLog(t *testing.T) {
	t.Parallel()
	path := sealedLog(t, 2)
	writeFile(t, path, nil)
	if l, err := proxmoxsafe.OpenAuditLog(path, keyed()); err == nil {
		l.Close()
		t.Fatal("OpenAuditLog started over in an emptied log that has a seal")
	}
}

func TestOpenAuditLogKeyMismatch(t *testing.T) {
	t.Parallel()
	path := sealedLog(t, 1)
	for name, opts := range map[string]*proxmoxsafe.AuditLogOptions{
		"no key":      nil,
		"another key": {Key: bytes.Repeat([]byte{3}, 32)},
	} {
		l, err := proxmoxsafe.OpenAuditLog(path, opts)
		if err == nil {
			l.Close()
			t.Fatalf("%s: OpenAuditLog accepted", name)
		}
		if !errors.Is(err, proxmoxsafe.ErrAuditKey) {
			t.Errorf("%s: err = %v, want ErrAuditKey", name, err)
		}
	}
}

// TestAuditLogTwoWriters: two AuditLogs on one file (as two processes on
// one host with the default path) take turns under the file lock and each
// continues the chain after the other's records.
func TestAuditLogTwoWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := proxmoxsafe.OpenAuditLog(path, keyed())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const each = 40
	var wg sync.WaitGroup
	for _, l := range []*proxmoxsafe.AuditLog{a, b} {
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
	if sum, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); err != nil || sum.Records != 2*each+1 || !sum.Sealed {
		t.Fatalf("VerifyAuditFile = %+v, %v; want %d sealed records", sum, err, 2*each+1)
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

func TestAuditLogMirror(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	m := &failingMirror{}
	l, err := proxmoxsafe.OpenAuditLog(path, &proxmoxsafe.AuditLogOptions{Key: testAuditKey, Mirror: m})
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
	if _, err := proxmoxsafe.VerifyAuditLog(bytes.NewReader(m.buf.Bytes()), verifyKeyed()); err == nil || !strings.Contains(err.Error(), "seq 5, want 4") {
		t.Errorf("mirror copy verify err = %v, want the gap", err)
	}
	if _, err := proxmoxsafe.VerifyAuditFile(path, verifyKeyed()); err != nil {
		t.Error(err)
	}
}
