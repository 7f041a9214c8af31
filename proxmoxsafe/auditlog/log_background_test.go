package auditlog_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Background verification (Options.VerifyInBackground): a server
// starts without reading its whole log first, and the log still fails
// closed before the first mutation.

var inBackground = &auditlog.Options{VerifyInBackground: true}

// newLogFile writes n sample records to a new log file opened with opts
// and returns its path.
func newLogFile(t *testing.T, opts *auditlog.Options, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	appendRecords(t, path, opts, 0, n)
	return path
}

// appendRecords opens the log file at path with opts, records the sample
// records from to from+n-1 and closes it.
func appendRecords(t *testing.T, path string, opts *auditlog.Options, from, n int) {
	t.Helper()
	l, err := auditlog.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		if err := l.Record(t.Context(), auditSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenInBackgroundContinuesChain(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, nil, 3)
	l, err := auditlog.Open(path, inBackground)
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
	if sum, err := auditlog.VerifyFile(path, nil); err != nil || sum.Records != 6 || !sum.Sealed {
		t.Fatalf("VerifyFile = %+v, %v; want 6 sealed records", sum, err)
	}
}

// TestOpenInBackgroundRefusesDamagedFile: the damage a synchronous
// open reports (TestOpenRefusesDamagedFile) is reported by
// WaitVerified and by every Record, which writes nothing.
func TestOpenInBackgroundRefusesDamagedFile(t *testing.T) {
	t.Parallel()
	cases := damagedAuditLogs(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeFile(t, path, tc.data)
			l, err := auditlog.Open(path, inBackground)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer l.Close()
			werr := l.WaitVerified(t.Context())
			var oe *auditlog.OpenError
			if !errors.As(werr, &oe) || !strings.Contains(werr.Error(), tc.wantErr) || !strings.Contains(werr.Error(), path) {
				t.Errorf("WaitVerified = %v, want an OpenError naming %s and %q", werr, path, tc.wantErr)
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

// mutationEnv is a client of a fake cluster with one running guest
// (pve1/qemu/100), allowed to power it off, that audits to its log.
type mutationEnv struct {
	fake   *proxmoxtest.Server
	client *proxmoxsafe.Client
}

func newMutationEnv(t *testing.T, audit proxmoxsafe.AuditSink) *mutationEnv {
	t.Helper()
	fake := proxmoxtest.NewServer(&proxmoxtest.Cluster{
		Nodes:  []*proxmoxtest.Node{{Name: "pve1", Online: true}},
		Guests: []*proxmoxtest.Guest{{VMID: 100, Node: "pve1", Type: "qemu", Name: "web1", Status: "running", Uptime: 86400}},
	})
	t.Cleanup(fake.Close)
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(),
		Policy:      proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}},
		Audit:       audit,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &mutationEnv{fake: fake, client: c}
}

// stopIn stops pve1/qemu/100 with its approval phrase.
func stopIn() proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Action: proxmoxsafe.ActionStop}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(in.Action), in.Target())
	return in
}

func reqLines(rs []proxmoxtest.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Method + " " + r.Path
	}
	return out
}

// TestMutationWaitsForAuditVerification: while the log is being verified,
// a mutation is held at its first audit record and sends nothing; it is
// refused, with nothing sent, when the verification fails or the caller
// gives up first, and goes ahead only once the log verified; with
// VerifyLater, the record starts the verification it waits for. Not
// parallel: it sets the package's verification hooks.
func TestMutationWaitsForAuditVerification(t *testing.T) {
	for _, opts := range []*auditlog.Options{inBackground, verifyLater} {
		name := "in background"
		if opts.VerifyLater {
			name = "later"
		}
		t.Run(name, func(t *testing.T) { testMutationWaitsForAuditVerification(t, opts) })
	}
}

func testMutationWaitsForAuditVerification(t *testing.T, opts *auditlog.Options) {
	good := newLogFile(t, nil, 3)
	tampered := newLogFile(t, nil, 3)
	writeFile(t, tampered, bytes.Replace(readFile(t, tampered), []byte(`"vmid":101`), []byte(`"vmid":109`), 1))

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
			defer auditlog.SetVerifyHooks(func() { <-release }, func() { waiting <- struct{}{} })()
			// The log is copied so that each case continues its own.
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeFile(t, path, readFile(t, tc.path))
			writeFile(t, path+".seal", readFile(t, tc.path+".seal"))
			al, err := auditlog.Open(path, opts)
			if err != nil {
				close(release)
				t.Fatalf("Open: %v", err)
			}
			defer al.Close()
			e := newMutationEnv(t, al)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := e.client.GuestPower(ctx, stopIn())
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

// TestLogCloseStopsBackgroundVerification: closing a log whose
// verification has not ended stops it (no goroutine is left; goleak
// checks) and later records fail.
func TestLogCloseStopsBackgroundVerification(t *testing.T) {
	release := make(chan struct{})
	defer auditlog.SetVerifyHooks(func() { <-release }, nil)()
	l, err := auditlog.Open(newLogFile(t, nil, 2), inBackground)
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

var verifyLater = &auditlog.Options{VerifyInBackground: true, VerifyLater: true}

// TestVerifyLaterStartsWhenAsked: with VerifyLater, Open does not start the
// background verification; StartVerification does (once), and the log
// then verifies and continues its chain as with VerifyInBackground alone.
func TestVerifyLaterStartsWhenAsked(t *testing.T) {
	t.Parallel()
	path := newLogFile(t, nil, 3)
	l, err := auditlog.Open(path, verifyLater)
	if err != nil {
		t.Fatal(err)
	}
	// Held back, the verification of three records cannot end: a wait
	// runs out. (Started, it would end in microseconds.)
	held, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := l.WaitVerified(held); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open with VerifyLater started the verification: WaitVerified = %v, want it to run out", err)
	}
	l.StartVerification()
	l.StartVerification()
	if err := l.WaitVerified(t.Context()); err != nil {
		t.Fatalf("StartVerification did not start it: WaitVerified: %v", err)
	}
	if err := l.Record(t.Context(), auditSample(10)); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if sum, err := auditlog.VerifyFile(path, nil); err != nil || sum.Records != 5 || !sum.Sealed {
		t.Fatalf("VerifyFile = %+v, %v; want 5 sealed records", sum, err)
	}
}

// TestVerifyLaterRecordStartsIt: a Record on a log whose verification was
// held back starts it and waits for it: a damaged log is refused with
// nothing written, as with VerifyInBackground alone; a good one takes the
// record.
func TestVerifyLaterRecordStartsIt(t *testing.T) {
	t.Parallel()
	for _, tc := range damagedAuditLogs(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeFile(t, path, tc.data)
			l, err := auditlog.Open(path, verifyLater)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer l.Close()
			if err := l.Record(t.Context(), auditSample(9)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Record = %v, want the verification error", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, tc.data) {
				t.Error("the refused file was modified")
			}
		})
	}
	path := newLogFile(t, nil, 2)
	l, err := auditlog.Open(path, verifyLater)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), auditSample(5)); err != nil {
		t.Fatalf("Record on a good log: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if sum, err := auditlog.VerifyFile(path, nil); err != nil || sum.Records != 4 {
		t.Fatalf("VerifyFile = %+v, %v; want 4 records", sum, err)
	}
}

// TestVerifyLaterClosedUnstarted: closing a log whose verification was
// never started returns (no goroutine is left; goleak checks), later
// records fail, and WaitVerified reports the stop.
func TestVerifyLaterClosedUnstarted(t *testing.T) {
	t.Parallel()
	l, err := auditlog.Open(newLogFile(t, nil, 2), verifyLater)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), auditSample(1)); err == nil {
		t.Fatal("Record after Close succeeded")
	}
	if err := l.WaitVerified(t.Context()); err == nil {
		t.Fatal("WaitVerified after a Close that stopped the verification = nil")
	}
}
