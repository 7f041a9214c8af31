package proxmoxsafe_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// fastVerify polls every millisecond or so: the fake answers at once, and
// real intervals would only slow the tests down.
func fastVerify() *proxmoxsafe.WaitOptions {
	return &proxmoxsafe.WaitOptions{Interval: time.Millisecond, MaxInterval: 5 * time.Millisecond}
}

// auditEvents decodes the audit log and checks its chain; it returns the
// records after the anchor.
func auditEvents(t *testing.T, e *env) []proxmoxsafe.AuditRecord {
	t.Helper()
	log := e.audit.String()
	sum, err := auditlog.Verify(strings.NewReader(log), nil)
	if err != nil {
		t.Fatalf("audit log does not verify: %v\n%s", err, log)
	}
	var out []proxmoxsafe.AuditRecord
	for l := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		var r proxmoxsafe.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if sum.Records != len(out) {
		t.Fatalf("verified %d records, decoded %d", sum.Records, len(out))
	}
	if len(out) > 0 && out[0].Event == proxmoxsafe.AuditAnchor {
		out = out[1:]
	}
	return out
}

func eventNames(recs []proxmoxsafe.AuditRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Event))
	}
	return out
}

// statusReadsAfterPost counts the status/current reads after the first POST.
func statusReadsAfterPost(e *env, vmid string) int {
	n, posted := 0, false
	for _, r := range e.requests() {
		if r.Method == "POST" {
			posted = true
		}
		if posted && r.Method == "GET" && strings.HasSuffix(r.Path, "/"+vmid+"/status/current") {
			n++
		}
	}
	return n
}

func TestWaitWarnings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.FailNextTask("WARNINGS: 2")
	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = fastVerify()
	r, err := e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatalf("GuestPower: %v", err)
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeCompletedWithWarnings || o.Warnings != 2 || o.ExitStatus != "WARNINGS: 2" || !o.Verified {
		t.Errorf("outcome = %+v", o)
	}
	if !strings.Contains(o.Message, "completed with warnings (2)") {
		t.Errorf("message = %q", o.Message)
	}
	if len(o.LogTail) == 0 || o.LogTail[len(o.LogTail)-1] != "TASK WARNINGS: 2" || !slices.Contains(o.LogTail, "WARN: simulated warning 2") {
		t.Errorf("log tail = %q", o.LogTail)
	}
	recs := auditEvents(t, e)
	last := recs[len(recs)-1]
	if last.Event != proxmoxsafe.AuditCompleted || !strings.Contains(last.Reason, "WARNINGS: 2") {
		t.Errorf("last record = %+v", last)
	}
}

func TestWaitTaskFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const msg = "start failed: QEMU exited with code 1"
	e.fake.FailNextTask(msg)
	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = fastVerify()
	r, err := e.client.GuestPower(t.Context(), in)
	var te *proxmoxsafe.TaskError
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !errors.As(err, &te) || te.ExitStatus != msg {
		t.Fatalf("err = %v, want a TaskError", err)
	}
	if r == nil || r.Outcome == nil {
		t.Fatal("a submitted mutation must return its receipt and outcome")
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeFailed || o.ExitStatus != msg || o.Verified || te.UPID != r.UPID {
		t.Errorf("outcome = %+v", o)
	}
	if len(o.LogTail) == 0 || o.LogTail[len(o.LogTail)-1] != "TASK ERROR: "+msg {
		t.Errorf("log tail = %q", o.LogTail)
	}
	if o.After == nil || o.After.Status != "stopped" || o.Observed != "stopped" {
		t.Errorf("state after = %+v (%q)", o.After, o.Observed)
	}
	if !strings.Contains(o.Message, "FAILED: "+msg) {
		t.Errorf("message = %q", o.Message)
	}
	recs := auditEvents(t, e)
	if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Fatalf("audit events = %v", got)
	}
	if f := recs[2]; f.UPID != r.UPID || f.Reason != "task failed: "+msg {
		t.Errorf("failed record = %+v", f)
	}
}

func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	cluster := testCluster()
	fake := proxmoxtest.NewUnstartedServer(cluster)
	fake.TaskPolls = 1_000_000
	fake.StartTLS()
	e := envFor(t, fake, false, nil)
	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = fastVerify()
	// Long enough for a status poll to answer on a loaded machine under
	// -race (50 ms was not: with no poll answered the outcome rightly says
	// the status could not be read, which TestWaitStatusNeverAnswers covers).
	const timeout = 2 * time.Second
	in.Wait.Timeout = timeout
	r, err := e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatalf("a timeout is not an error: %v", err)
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeTimeout || o.TaskStatus != "running" || o.ExitStatus != "" || o.Verified || o.Timeout != timeout {
		t.Errorf("outcome = %+v", o)
	}
	if !strings.Contains(o.Message, "still running") || !strings.Contains(o.Message, r.UPID) {
		t.Errorf("message = %q", o.Message)
	}
	// The state at the timeout is read once more for the record.
	if o.After == nil || o.After.Status != "stopped" {
		t.Errorf("after = %+v", o.After)
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted"}) {
		t.Errorf("a timeout adds no audit record: %v", got)
	}
}

func TestWaitContextCancel(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewUnstartedServer(testCluster())
	fake.TaskPolls = 1_000_000
	fake.StartTLS()
	e := envFor(t, fake, false, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = fastVerify()
	in.Wait.OnProgress = func(p proxmoxsafe.Progress) {
		if p.Poll == 3 {
			cancel()
		}
	}
	r, err := e.client.GuestPower(ctx, in)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r == nil || r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeSubmitted || !strings.Contains(r.Outcome.Message, r.UPID) {
		t.Fatalf("receipt = %+v", r)
	}
	if r.Outcome.TaskPolls != 3 {
		t.Errorf("task polls = %d, want 3 (cancelled on the third)", r.Outcome.TaskPolls)
	}
	// goleak (TestMain) checks that no poller goroutine is left behind.
}

// TestWaitRefusals: a Verify that cannot run reads nothing, and a bad Wait
// is refused before the mutation like any other invalid input.
func TestWaitRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if _, err := e.client.Verify(t.Context(), nil, nil); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("nil receipt: %v", err)
	}
	bad := &proxmoxsafe.Receipt{UPID: "UPID:pve3:00001F41:0000D071:5FBE5E6D:qmstart:300:root@pam:", Action: "start",
		Target: proxmoxsafe.Target{Node: "pve3", Type: "qemu", VMID: 300}}
	if _, err := e.client.Verify(t.Context(), bad, nil); !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
		t.Errorf("node not allowlisted: %v", err)
	}
	bad = &proxmoxsafe.Receipt{UPID: "not a upid", Action: "start", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101}}
	if _, err := e.client.Verify(t.Context(), bad, nil); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("bad UPID: %v", err)
	}
	bad = &proxmoxsafe.Receipt{UPID: "UPID:pve1:00001F41:0000D071:5FBE5E6D:qmstart:101:root@pam:", Action: "migrate",
		Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101}}
	if _, err := e.client.Verify(t.Context(), bad, nil); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("unknown action: %v", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("refused verifications sent %d requests: %v", n, reqLines(e.requests()))
	}

	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = &proxmoxsafe.WaitOptions{Timeout: -time.Second}
	if _, err := e.client.GuestPower(t.Context(), in); !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
		t.Errorf("negative timeout: %v", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("a refused input sent %d requests: %v", n, reqLines(e.requests()))
	}
}

// TestVerifyLater: a receipt taken without waiting can be verified later,
// and Verify never mutates.
func TestVerifyLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != nil {
		t.Fatalf("a receipt without Wait has no outcome: %+v", r.Outcome)
	}
	var polls []int
	opts := fastVerify()
	opts.OnProgress = func(p proxmoxsafe.Progress) { polls = append(polls, p.Poll) }
	o, err := e.client.Verify(t.Context(), r, opts)
	if err != nil || o.Status != proxmoxsafe.OutcomeCompleted || o.Observed != "stopped" {
		t.Fatalf("Verify = %+v, %v", o, err)
	}
	if !slices.IsSorted(polls) || len(polls) == 0 || polls[0] != 1 {
		t.Errorf("progress polls = %v, want increasing from 1", polls)
	}
	if m := e.fake.MutatingRequests(); len(m) != 1 {
		t.Errorf("mutating requests = %v", reqLines(m))
	}
}
