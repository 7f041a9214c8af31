package proxmoxsafe_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Background verification (AuditLogOptions.VerifyInBackground): a server
// starts without reading its whole log first, and the log still fails
// closed before the first mutation.

var inBackground = &proxmoxsafe.AuditLogOptions{VerifyInBackground: true}

// fileLog writes n records to a new log file and returns its path.
func fileLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := proxmoxsafe.OpenAuditLog(path, nil)
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

func TestOpenAuditLogInBackgroundContinuesChain(t *testing.T) {
	t.Parallel()
	path := fileLog(t, 3)
	l, err := proxmoxsafe.OpenAuditLog(path, inBackground)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitVerified(t.Context()); err != nil {
		t.Fatalf("WaitVerified: %v", err)
	}
	for i := range 2 {
		if err := l.Record(t.Context(), auditSample(10+i)); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if sum, err := proxmoxsafe.VerifyAuditFile(path, nil); err != nil || sum.Records != 6 || !sum.Sealed {
		t.Fatalf("VerifyAuditFile = %+v, %v; want 6 sealed records", sum, err)
	}
}

// TestOpenAuditLogInBackgroundRefusesDamagedFile: the damage a synchronous
// open reports (TestOpenAuditLogRefusesDamagedFile) is reported by
// WaitVerified and by every Record, which writes nothing.
func TestOpenAuditLogInBackgroundRefusesDamagedFile(t *testing.T) {
	t.Parallel()
	cases := damagedAuditLogs(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := proxmoxsafe.OpenAuditLog(path, inBackground)
			if err != nil {
				t.Fatalf("OpenAuditLog: %v", err)
			}
			defer l.Close()
			werr := l.WaitVerified(t.Context())
			var oe *proxmoxsafe.AuditOpenError
			if !errors.As(werr, &oe) || !strings.Contains(werr.Error(), tc.wantErr) || !strings.Contains(werr.Error(), path) {
				t.Errorf("WaitVerified = %v, want an AuditOpenError naming %s and %q", werr, path, tc.wantErr)
			}
			if err := l.Record(t.Context(), auditSample(9)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Record = %v, want the verification error", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, tc.data) {
				t.Error("the refused file was modified")
			}
		})
	}
}

// TestMutationWaitsForAuditVerification: while the log is being verified,
// a mutation is held at its first audit record and sends nothing; it is
// refused, with nothing sent, when the verification fails or the caller
// gives up first, and goes ahead only once the log verified. Not
// parallel: it sets the package's verification hooks.
func TestMutationWaitsForAuditVerification(t *testing.T) {
	good := fileLog(t, 3)
	tampered := fileLog(t, 3)
	data, _ := os.ReadFile(tampered)
	os.WriteFile(tampered, bytes.Replace(data, []byte(`"vmid":101`), []byte(`"vmid":109`), 1), 0o600)

	for _, tc := range []struct {
		name      string
		path      string
		cancel    bool // the caller gives up while the mutation waits
		wantErr   string
		mutations int
	}{
		{"log does not verify", tampered, false, "does not verify", 0},
		{"caller gives up first", good, true, "still being verified", 0},
		{"log verifies", good, false, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, waiting := make(chan struct{}), make(chan struct{}, 1)
			defer proxmoxsafe.SetAuditVerifyHooks(func() { <-release }, func() { waiting <- struct{}{} })()
			// The log is copied so that each case continues its own.
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			b, _ := os.ReadFile(tc.path)
			os.WriteFile(path, b, 0o600)
			s, _ := os.ReadFile(tc.path + ".seal")
			os.WriteFile(path+".seal", s, 0o600)
			al, err := proxmoxsafe.OpenAuditLog(path, inBackground)
			if err != nil {
				close(release)
				t.Fatalf("OpenAuditLog: %v", err)
			}
			defer al.Close()
			e := newEnv(t, func(c *proxmoxsafe.Config) { c.Audit = al })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := e.client.GuestPower(ctx, powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
				done <- err
			}()
			select {
			case <-waiting: // held at its first audit record
			case err := <-done:
				close(release)
				t.Fatalf("GuestPower returned before the log was verified: %v (mutating requests: %v)", err, reqLines(e.fake.MutatingRequests()))
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests while the log is being verified: %v", reqLines(m))
			}
			if tc.cancel {
				cancel()
				err = <-done
				close(release)
			} else {
				close(release)
				err = <-done
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("GuestPower after the log verified: %v", err)
			case tc.wantErr != "" && (!errors.Is(err, proxmoxsafe.ErrAudit) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "no action was taken")):
				t.Errorf("GuestPower = %v, want an ErrAudit refusal saying %q", err, tc.wantErr)
			}
			if m := e.fake.MutatingRequests(); len(m) != tc.mutations {
				t.Errorf("mutating requests = %v, want %d", reqLines(m), tc.mutations)
			}
		})
	}
}

// TestAuditLogCloseStopsBackgroundVerification: closing a log whose
// verification has not ended stops it (no goroutine is left; goleak
// checks) and later records fail.
func TestAuditLogCloseStopsBackgroundVerification(t *testing.T) {
	release := make(chan struct{})
	defer proxmoxsafe.SetAuditVerifyHooks(func() { <-release }, nil)()
	l, err := proxmoxsafe.OpenAuditLog(fileLog(t, 2), inBackground)
	if err != nil {
		t.Fatal(err)
	}
	go close(release)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), auditSample(1)); err == nil {
		t.Fatal("Record after Close succeeded")
	}
}
