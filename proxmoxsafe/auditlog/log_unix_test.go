//go:build unix

package auditlog_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// TestOpenRefusesFIFO: a FIFO as the audit path used to block
// startup forever (opening it for writing waits for a reader). It must be
// refused at once. The bound below only keeps a regression from hanging
// the test run; it asserts nothing about speed.
func TestOpenRefusesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		l   *auditlog.Log
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := auditlog.Open(path, nil)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		if r.err == nil {
			r.l.Close()
			t.Fatal("Open accepted a FIFO")
		}
		if !strings.Contains(r.err.Error(), "not a regular file") {
			t.Errorf("err = %v", r.err)
		}
	case <-time.After(time.Minute):
		// Unblock the open so the goroutine ends, then fail.
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-done
			f.Close()
		}
		t.Fatal("Open blocked on a FIFO")
	}
	for _, fn := range []func() error{
		func() error { _, err := auditlog.VerifyFile(path, nil); return err },
		func() error { _, err := auditlog.Repair(path, nil); return err },
	} {
		if err := fn(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err = %v, want not a regular file", err)
		}
	}
}
