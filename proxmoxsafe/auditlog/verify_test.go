package auditlog_test

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
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// testAuditKey is the key of the keyed logs in these tests.
var testAuditKey = bytes.Repeat([]byte{0x5a}, 32)

func keyed() *auditlog.Options {
	return &auditlog.Options{Key: testAuditKey}
}

func verifyKeyed() *auditlog.VerifyOptions {
	return &auditlog.VerifyOptions{Key: testAuditKey}
}

func TestVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	orig := auditLines(t, testAuditKey, 4) // line 1 anchor, lines 2-5 records
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
			return append(slices.Clone(orig), auditLines(t, testAuditKey, 1)...)
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
			return append(slices.Clone(orig), bytes.Repeat([]byte("x"), auditlog.MaxLineBytes+1)...)
		}, 5, "line 6: longer than 1048576 bytes"},
		// Issue 15 §3: a full rewrite with a recomputed chain. Without the
		// key the rewriter can only produce an unkeyed chain, or one keyed
		// with another key; both are refused.
		{"rewrite with a recomputed unkeyed chain", func() []byte {
			return auditLines(t, nil, 4)
		}, 0, "line 1: the log is not keyed but a key was given"},
		{"rewrite with another key", func() []byte {
			return auditLines(t, bytes.Repeat([]byte{1}, 32), 4)
		}, 0, "line 1: the log was written with another key"},
		// The chain alone cannot see the last line change: the seal does
		// (TestVerifyFileDetectsTailTampering).
		{"edit the last line (the seal's job)", func() []byte {
			ls := lines()
			ls[4] = bytes.Replace(ls[4], []byte(`"submitted"`), []byte(`"refused"`), 1)
			return join(ls)
		}, 5, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sum, err := auditlog.Verify(bytes.NewReader(tc.tamper()), verifyKeyed())
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

func TestVerifyKey(t *testing.T) {
	t.Parallel()
	log := auditLines(t, testAuditKey, 2)
	if sum, err := auditlog.Verify(bytes.NewReader(log), verifyKeyed()); err != nil || !sum.Keyed || sum.Records != 3 {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
	if _, err := auditlog.Verify(bytes.NewReader(log), nil); !errors.Is(err, auditlog.ErrKey) {
		t.Errorf("without the key: err = %v, want ErrKey", err)
	}
	other := &auditlog.VerifyOptions{Key: bytes.Repeat([]byte{7}, 32)}
	if _, err := auditlog.Verify(bytes.NewReader(log), other); !errors.Is(err, auditlog.ErrKey) {
		t.Errorf("with another key: err = %v, want ErrKey", err)
	}
	short := &auditlog.VerifyOptions{Key: []byte("short")}
	if _, err := auditlog.Verify(bytes.NewReader(log), short); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short key: err = %v", err)
	}
	// The key never appears in the log.
	if bytes.Contains(log, testAuditKey) || bytes.Contains(log, []byte(hex.EncodeToString(testAuditKey))) {
		t.Error("the key is in the log")
	}
}

func TestVerifyPartialCopy(t *testing.T) {
	t.Parallel()
	// What a syslog mirror holds when it was switched on mid-log.
	full := splitAuditLines(auditLines(t, testAuditKey, 5))
	rest := bytes.Join(full[3:], nil)
	opts := &auditlog.VerifyOptions{Key: testAuditKey, Partial: true}
	sum, err := auditlog.Verify(bytes.NewReader(rest), opts)
	if err != nil || sum.Records != 3 || !sum.Partial {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
	edited := bytes.Replace(rest, []byte(`"vmid":102`), []byte(`"vmid":109`), 1)
	if _, err := auditlog.Verify(bytes.NewReader(edited), opts); err == nil {
		t.Error("an edit inside a partial copy verified")
	}
	if _, err := auditlog.Verify(bytes.NewReader(rest), verifyKeyed()); err == nil {
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

func TestLegacyLog(t *testing.T) {
	t.Parallel()
	old := legacyLog(t, 3)
	sum, err := auditlog.Verify(bytes.NewReader(old), nil)
	if err != nil || !sum.Legacy || sum.Records != 3 {
		t.Fatalf("Verify(legacy) = %+v, %v; want 3 legacy records", sum, err)
	}
	edited := bytes.Replace(old, []byte(`"vmid":100`), []byte(`"vmid":101`), 1)
	if _, err := auditlog.Verify(bytes.NewReader(edited), nil); err == nil {
		t.Error("an edited legacy log verified")
	}
	if _, err := auditlog.Verify(bytes.NewReader(old), verifyKeyed()); !errors.Is(err, auditlog.ErrLegacyFormat) {
		t.Errorf("with a key: err = %v, want ErrLegacyFormat", err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeFile(t, path, old)
	if sum, err := auditlog.VerifyFile(path, nil); err != nil || !sum.Legacy {
		t.Errorf("VerifyFile(legacy) = %+v, %v", sum, err)
	}
	l, err := auditlog.Open(path, keyed())
	if err == nil {
		l.Close()
		t.Fatal("Open continued a legacy log")
	}
	if !errors.Is(err, auditlog.ErrLegacyFormat) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("err = %v, want ErrLegacyFormat with migration advice", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, old) {
		t.Error("the legacy log was modified")
	}
}
