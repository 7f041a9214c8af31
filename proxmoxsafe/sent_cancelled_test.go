package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// holdMutation makes the fake hold the first request to path until the
// returned function is called, and returns a function that waits until
// the fake has received a mutating request.
func holdMutation(t *testing.T, e *env, method, path string) (release func(), arrived func()) {
	t.Helper()
	return holdFault(t, e, proxmoxtest.Fault{Method: method, Path: path})
}

// holdFault is holdMutation with the fault's other fields (an answer of
// its own) applied after the release.
func holdFault(t *testing.T, e *env, f proxmoxtest.Fault) (release func(), arrived func()) {
	t.Helper()
	hold := make(chan struct{})
	f.Hold, f.Times = hold, 1
	e.fake.InjectFault(f)
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	arrived = func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second) // a bound for a hung test, not a timing assertion
		for len(e.fake.MutatingRequests()) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the mutating request never reached the fake")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return release, arrived
}

// cancelWhileHeld calls call with a context that is cancelled while the
// fake holds the mutating request to method path, then lets the fake
// answer and returns what call returned.
func cancelWhileHeld[R any](t *testing.T, e *env, method, path string, call func(context.Context) (R, error)) (R, error) {
	t.Helper()
	return cancelWhileHeldFault(t, e, proxmoxtest.Fault{Method: method, Path: path}, call)
}

// cancelWhileHeldFault is cancelWhileHeld with the held request answered
// by the fault's other fields.
func cancelWhileHeldFault[R any](t *testing.T, e *env, f proxmoxtest.Fault, call func(context.Context) (R, error)) (R, error) {
	t.Helper()
	release, arrived := holdFault(t, e, f)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		r   R
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := call(ctx)
		done <- result{r, err}
	}()
	arrived()
	cancel()
	release()
	res := <-done
	return res.r, res.err
}

// assertSentBeforeCancel checks that err says the request was sent before
// the cancellation (a SentBeforeCancelError matching context.Canceled)
// and returns it.
func assertSentBeforeCancel(t *testing.T, err error) *proxmoxsafe.SentBeforeCancelError {
	t.Helper()
	var sc *proxmoxsafe.SentBeforeCancelError
	if !errors.As(err, &sc) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a SentBeforeCancelError matching context.Canceled", err)
	}
	return sc
}

// assertSubmittedOnce checks that exactly one mutating request, the POST
// to path, went out and that the audit log has it approved then submitted
// with upid.
func assertSubmittedOnce(t *testing.T, e *env, path, upid string) {
	t.Helper()
	if m := e.fake.MutatingRequests(); len(m) != 1 || reqLine(m[0]) != "POST "+path {
		t.Errorf("mutating requests = %v, want exactly one POST %s", reqLines(m), path)
	}
	recs := auditEvents(t, e)
	if len(recs) != 2 || recs[0].Event != proxmoxsafe.AuditApproved || recs[1].Event != proxmoxsafe.AuditSubmitted || recs[1].UPID != upid {
		t.Errorf("audit records = %+v, want approved then submitted with %s", recs, upid)
	}
}

// TestCancelWhileSendingKeepsTheUPID: the caller's context ends while
// Proxmox holds the POST (an MCP client's notifications/cancelled, a
// shutdown). The exchange is finished: the audit log records the UPID as
// submitted, exactly one mutating request went out, the wait is skipped,
// and the error says the request was sent and names the running task.
func TestCancelWhileSendingKeepsTheUPID(t *testing.T) {
	t.Parallel()
	for _, wait := range []bool{false, true} {
		name := "no wait"
		if wait {
			name = "with wait"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			const path = "/nodes/pve1/qemu/100/status/shutdown"
			in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
			if wait {
				in.Wait = &proxmoxsafe.WaitOptions{}
			}
			r, err := cancelWhileHeld(t, e, "POST", path, func(ctx context.Context) (*proxmoxsafe.Receipt, error) {
				return e.client.GuestPower(ctx, in)
			})

			sc := assertSentBeforeCancel(t, err)
			if r == nil || !strings.HasPrefix(r.UPID, "UPID:pve1:") || sc.UPID != r.UPID || sc.Receipt != r {
				t.Fatalf("receipt = %+v, error's UPID %q: want the task's receipt beside the error", r, sc.UPID)
			}
			if r.Outcome != nil {
				t.Errorf("outcome = %+v: the wait should have been skipped after the cancellation", r.Outcome)
			}
			for _, want := range []string{r.UPID, "sent", "running in Proxmox"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			assertSubmittedOnce(t, e, path, r.UPID)
			if strings.Contains(e.audit.String(), "may have reached Proxmox") {
				t.Errorf("audit log still says the request may have reached Proxmox:\n%s", e.audit.String())
			}
			// Nothing went out after the answer: no task poll, no re-read.
			if last := e.requests()[len(e.requests())-1]; reqLine(last) != "POST "+path {
				t.Errorf("last request = %s, want the POST (nothing after the cancellation)", reqLine(last))
			}
		})
	}
}

// cancelOnApproved is an audit sink that cancels the caller's context as
// the "approved" record is written: the last moment before the request.
type cancelOnApproved struct {
	proxmoxsafe.AuditSink
	cancel context.CancelFunc
}

func (s cancelOnApproved) Record(ctx context.Context, rec proxmoxsafe.AuditRecord) error {
	err := s.AuditSink.Record(ctx, rec)
	if rec.Event == proxmoxsafe.AuditApproved {
		s.cancel()
	}
	return err
}

// TestCancelBeforeSendingSendsNothing: a context that ended before the
// request went out still stops it: zero mutating requests.
func TestCancelBeforeSendingSendsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		c.Audit = cancelOnApproved{AuditSink: c.Audit, cancel: cancel}
	})
	_, err := e.client.GuestPower(ctx, powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "not sent") {
		t.Fatalf("err = %v, want context.Canceled saying it was not sent", err)
	}
	var sc *proxmoxsafe.SentBeforeCancelError
	if errors.As(err, &sc) {
		t.Errorf("err = %v claims the request was sent", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests after the cancellation: %v", reqLines(m))
	}
}

// TestGatewayCancelWhileSendingKeepsTheUPID: a gateway write whose caller
// cancels while Proxmox holds it is finished like a typed mutation's:
// the result carries the UPID, the error says it was sent, the audit log
// has it as submitted, and exactly one mutating request went out.
func TestGatewayCancelWhileSendingKeepsTheUPID(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	// A write that starts a task (the fake models none of the routes
	// left to the gateway that do: it answers this one with a UPID).
	const path = gatewayGuestPath
	const upid = "UPID:pve1:00001234:00005678:6745A2B0:qmconfig:101:automation@pve!mcp:"
	in := proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: map[string]string{"action": "ACCEPT"}}
	phrase, err := proxmoxsafe.GatewayPhrase(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Approval = phrase
	answer := proxmoxtest.Fault{Method: "POST", Path: path, Body: []byte(`{"data":"` + upid + `"}`)}
	r, err := cancelWhileHeldFault(t, e, answer, func(ctx context.Context) (*proxmoxsafe.APIResult, error) {
		return e.client.APIRequest(ctx, in)
	})
	sc := assertSentBeforeCancel(t, err)
	if r == nil || !strings.HasPrefix(r.UPID, "UPID:pve1:") || sc.UPID != r.UPID {
		t.Fatalf("result = %+v, error's UPID %q: want the task's UPID in both", r, sc.UPID)
	}
	assertSubmittedOnce(t, e, path, r.UPID)
}
