package auditlog_test

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// BenchmarkRecordFile is the cost of one audit record in a keyed log
// file: lock, catch-up check, write, fsync, seal write, fsync.
func BenchmarkRecordFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	l, err := auditlog.Open(path, &auditlog.Options{Key: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := auditSample(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Record(b.Context(), rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordStream is the same without the file system: the
// encoding and the HMAC.
func BenchmarkRecordStream(b *testing.B) {
	l := auditlog.New(io.Discard, &auditlog.Options{Key: bytes.Repeat([]byte{1}, 32)})
	rec := auditSample(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Record(b.Context(), rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyFile verifies a keyed, sealed log of 2,000 records.
func BenchmarkVerifyFile(b *testing.B) {
	key := bytes.Repeat([]byte{1}, 32)
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	l, err := auditlog.Open(path, &auditlog.Options{Key: key})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		if err := l.Record(b.Context(), auditSample(i%60)); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := auditlog.VerifyFile(path, &auditlog.VerifyOptions{Key: key}); err != nil {
			b.Fatal(err)
		}
	}
}
