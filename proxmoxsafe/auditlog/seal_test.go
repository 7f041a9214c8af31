package auditlog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

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

// TestVerifyFileDetectsTailTampering covers what the chain alone
// cannot see: the seal catches edits of the last line and
// removal of the last records.
func TestVerifyFileDetectsTailTampering(t *testing.T) {
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
			seal := `{"format":"proxmox-safe-mcp-audit-seal/1","seq":4,"size":` + strconv.Itoa(len(b)-len(ls[len(ls)-2])) +
				`,"link":"` + last.Prev + `","mac":"` + last.Prev + `"}`
			writeFile(t, path+".seal", []byte(seal))
		}, "the seal's MAC does not verify"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := newLogFile(t, keyed(), 4)
			tc.tamper(t, path)
			before := readFile(t, path)
			sum, err := auditlog.VerifyFile(path, verifyKeyed())
			if tc.wantErr == "" {
				if err != nil || !sum.Sealed || sum.Records != 5 {
					t.Fatalf("VerifyFile = %+v, %v", sum, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("VerifyFile err = %v, want it to contain %q", err, tc.wantErr)
			}
			l, err := auditlog.Open(path, keyed())
			if err == nil {
				l.Close()
				t.Fatal("Open continued a tampered log")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "evidence") {
				t.Errorf("Open err = %v, want %q and advice", err, tc.wantErr)
			}
			if !bytes.Equal(readFile(t, path), before) {
				t.Error("the refused log was modified")
			}
		})
	}
}

// TestVerifyFileRollbackIsUndetectable pins a documented limit
// (docs/SECURITY.md): restoring an earlier copy of both the log and its
// seal yields a consistent pair. Only a copy off the host (Mirror) shows it.
func TestVerifyFileRollbackIsUndetectable(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 2)
	oldLog, oldSeal := readFile(t, path), readFile(t, path+".seal")
	appendRecords(t, path, keyed(), 9, 1)
	writeFile(t, path, oldLog)
	writeFile(t, path+".seal", oldSeal)
	if _, err := auditlog.VerifyFile(path, verifyKeyed()); err != nil {
		t.Fatalf("a consistent rollback did not verify (update docs/SECURITY.md if this is now detected): %v", err)
	}
}
