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
	hold := make(chan struct{})
	e.fake.InjectFault(proxmoxtest.Fault{Method: method, Path: path, Hold: hold, Times: 1})
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
			release, arrived := holdMutation(t, e, "POST", path)
			ctx, cancel := context.WithCancel(t.Context())
			in := powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)
			if wait {
				in.Wait = &proxmoxsafe.WaitOptions{}
			}
			type result struct {
				r   *proxmoxsafe.Receipt
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := e.client.GuestPower(ctx, in)
				done <- result{r, err}
			}()
			arrived()
			cancel()
			release()
			res := <-done

			var sc *proxmoxsafe.SentBeforeCancelError
			if !errors.As(res.err, &sc) || !errors.Is(res.err, context.Canceled) {
				t.Fatalf("err = %v, want a SentBeforeCancelError matching context.Canceled", res.err)
			}
			if res.r == nil || !strings.HasPrefix(res.r.UPID, "UPID:pve1:") || sc.UPID != res.r.UPID || sc.Receipt != res.r {
				t.Fatalf("receipt = %+v, error's UPID %q: want the task's receipt beside the error", res.r, sc.UPID)
			}
			if res.r.Outcome != nil {
				t.Errorf("outcome = %+v: the wait should have been skipped after the cancellation", res.r.Outcome)
			}
			for _, want := range []string{res.r.UPID, "sent", "running in Proxmox"} {
				if !strings.Contains(res.err.Error(), want) {
					t.Errorf("error %q does not say %q", res.err, want)
				}
			}
			if m := e.fake.MutatingRequests(); len(m) != 1 || reqLine(m[0]) != "POST "+path {
				t.Errorf("mutating requests = %v, want exactly one POST %s", reqLines(m), path)
			}
			recs := auditEvents(t, e)
			if len(recs) != 2 || recs[0].Event != proxmoxsafe.AuditApproved || recs[1].Event != proxmoxsafe.AuditSubmitted || recs[1].UPID != res.r.UPID {
				t.Errorf("audit records = %+v, want approved then submitted with %s", recs, res.r.UPID)
			}
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
	const path = "/nodes/pve1/qemu/101/snapshot"
	in := proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: map[string]string{"snapname": "gw1"}}
	phrase, err := proxmoxsafe.GatewayPhrase(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Approval = phrase
	release, arrived := holdMutation(t, e, "POST", path)
	ctx, cancel := context.WithCancel(t.Context())
	type result struct {
		r   *proxmoxsafe.APIResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.client.APIRequest(ctx, in)
		done <- result{r, err}
	}()
	arrived()
	cancel()
	release()
	res := <-done
	var sc *proxmoxsafe.SentBeforeCancelError
	if !errors.As(res.err, &sc) || !errors.Is(res.err, context.Canceled) {
		t.Fatalf("err = %v, want a SentBeforeCancelError matching context.Canceled", res.err)
	}
	if res.r == nil || !strings.HasPrefix(res.r.UPID, "UPID:pve1:") || sc.UPID != res.r.UPID {
		t.Fatalf("result = %+v, error's UPID %q: want the task's UPID in both", res.r, sc.UPID)
	}
	if m := e.fake.MutatingRequests(); len(m) != 1 || reqLine(m[0]) != "POST "+path {
		t.Errorf("mutating requests = %v, want exactly one POST %s", reqLines(m), path)
	}
	recs := auditEvents(t, e)
	if len(recs) != 2 || recs[0].Event != proxmoxsafe.AuditApproved || recs[1].Event != proxmoxsafe.AuditSubmitted || recs[1].UPID != res.r.UPID {
		t.Errorf("audit records = %+v, want approved then submitted with %s", recs, res.r.UPID)
	}
}
