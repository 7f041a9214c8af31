package auditlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

func TestRepairTornLine(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 3)
	good := readFile(t, path)
	torn := []byte(`{"time":"2026-08-21T12:00:09Z","event":"appro`)
	writeFile(t, path, slices.Concat(good, torn))

	_, err := auditlog.VerifyFile(path, verifyKeyed())
	if !errors.Is(err, auditlog.ErrTornLine) {
		t.Fatalf("VerifyFile err = %v, want ErrTornLine", err)
	}
	if _, err := auditlog.Open(path, keyed()); err == nil || !strings.Contains(err.Error(), "audit repair") {
		t.Fatalf("Open err = %v, want advice to run audit repair", err)
	}
	rep, err := auditlog.Repair(path, keyed())
	if err != nil {
		t.Fatalf("Repair: %v", err)
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
	if last.Event != proxmoxsafe.AuditRepaired || last.Seq != 5 || !strings.Contains(last.Reason, strconv.Itoa(len(torn))+" bytes") || !strings.Contains(last.Reason, rep.TornSHA256) {
		t.Errorf("last record = %+v, want a repaired record naming the removed bytes", last)
	}
	if s, err := auditlog.VerifyFile(path, verifyKeyed()); err != nil || !s.Sealed {
		t.Fatalf("after repair: %+v, %v", s, err)
	}
	// Repairing a healthy log changes nothing.
	if rep, err := auditlog.Repair(path, keyed()); err != nil || rep.Record.Event != "" {
		t.Errorf("second repair = %+v, %v", rep, err)
	}
	if !bytes.Equal(readFile(t, path), after) {
		t.Error("repairing a healthy log modified it")
	}
	l, err := auditlog.Open(path, keyed())
	if err != nil {
		t.Fatalf("Open after repair: %v", err)
	}
	l.Close()
}

func TestRepairRefusesOtherDamage(t *testing.T) {
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
			path := newLogFile(t, keyed(), 3)
			bad := tamper(readFile(t, path))
			writeFile(t, path, bad)
			if _, err := auditlog.Repair(path, keyed()); err == nil || !strings.Contains(err.Error(), "not repaired") {
				t.Fatalf("err = %v, want not repaired", err)
			}
			if !bytes.Equal(readFile(t, path), bad) {
				t.Error("a log that cannot be repaired was modified")
			}
		})
	}
}

func TestRepairSealBehind(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 2)
	oldSeal := readFile(t, path+".seal")
	appendRecords(t, path, keyed(), 5, 1)
	writeFile(t, path+".seal", oldSeal) // as if the process died before sealing
	if _, err := auditlog.VerifyFile(path, verifyKeyed()); !errors.Is(err, auditlog.ErrSealBehind) {
		t.Fatalf("err = %v, want ErrSealBehind", err)
	}
	rep, err := auditlog.Repair(path, keyed())
	if err != nil || !rep.Resealed {
		t.Fatalf("Repair = %+v, %v", rep, err)
	}
	if s, err := auditlog.VerifyFile(path, verifyKeyed()); err != nil || s.Records != 5 {
		t.Fatalf("after repair: %+v, %v", s, err)
	}
}

// TestRepairRecordKeepsItsOp: the "repaired" record names the operation
// as it did before this package existed ("RepairAuditLog"), so that the
// line format, and whatever matches it, stay as they were.
func TestRepairRecordKeepsItsOp(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, keyed(), 2)
	writeFile(t, path, slices.Concat(readFile(t, path), []byte(`{"time":"2026-`)))
	if _, err := auditlog.Repair(path, keyed()); err != nil {
		t.Fatalf("Repair: %v", err)
	}
	recs := decodeAuditRecords(t, readFile(t, path))
	if last := recs[len(recs)-1]; last.Event != proxmoxsafe.AuditRepaired || last.Op != "RepairAuditLog" {
		t.Errorf("last record = %+v, want event repaired, op RepairAuditLog", last)
	}
}
