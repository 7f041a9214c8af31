package proxmoxsafe_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// tripLatency is the fake's delay per request in the round-trip tests: far
// above the time the client takes between an answer and its next request,
// so that requests sent at once overlap and requests sent in turn do not
// even on a busy machine. The tests count round trips; they never time.
const tripLatency = 100 * time.Millisecond

// tripEnv is newEnv with the fake delaying every request by tripLatency.
func tripEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(testCluster())
	fake.Latency = tripLatency
	fake.StartTLS()
	return envFor(t, fake, false, mod)
}

// warm opens as many keep-alive connections as a mutation's checks use at
// once (two ClusterStatus calls at once send six reads at once) and
// empties the request log: a TLS handshake is no request the fake logs,
// but on a loaded machine (and under -race) it may take longer than the
// latency and make reads sent at once look sent in turn.
func warm(t *testing.T, e *env) {
	t.Helper()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := e.client.ClusterStatus(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	e.fake.ResetRequests()
}

// TestMutationRoundTrips: the reads a mutation needs are sent at once, so
// an approved mutation takes two sequential round trips (the reads, then
// its one request) and a refusal one, whatever the reads are.
func TestMutationRoundTrips(t *testing.T) {
	power := func(vmid int, action proxmoxsafe.PowerAction, phrase bool) func(*env) error {
		return func(e *env) error {
			in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: vmid}, Action: action}
			if phrase {
				in.Approval = in.ApprovalPhrase()
			}
			_, err := e.client.GuestPower(t.Context(), in)
			return err
		}
	}
	snapshot := func(phrase bool) func(*env) error {
		return func(e *env) error {
			in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "s1"}
			if phrase {
				in.Approval = in.ApprovalPhrase()
			}
			_, err := e.client.SnapshotGuest(t.Context(), in)
			return err
		}
	}
	protectByName := func(c *proxmoxsafe.Config) { c.Policy.ProtectedNames = []string{"nothere"} }
	snapshotAdmin := func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassSnapshotAdmin)
	}
	ct := proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}
	deleteSnap := func(e *env) error {
		in := proxmoxsafe.DeleteSnapshotInput{GuestRef: ct, Name: "before"}
		in.Approval = proxmoxsafe.ApprovalPhrase("delsnapshot", in.Target())
		_, err := e.client.DeleteSnapshot(t.Context(), in)
		return err
	}
	rollback := func(e *env) error {
		in := proxmoxsafe.RollbackSnapshotInput{GuestRef: ct, Name: "before"}
		in.Approval = in.ApprovalPhrase()
		_, err := e.client.RollbackSnapshot(t.Context(), in)
		return err
	}
	for _, tt := range []struct {
		name     string
		mod      func(*proxmoxsafe.Config)
		call     func(*env) error
		refused  error // nil: approved, one mutating request
		maxDepth int
	}{
		{"power approved", nil, power(100, proxmoxsafe.ActionShutdown, true), nil, 2},
		{"power approved, protection by name", protectByName, power(100, proxmoxsafe.ActionShutdown, true), nil, 2},
		{"power without a phrase", nil, power(100, proxmoxsafe.ActionShutdown, false), proxmoxsafe.ErrApprovalRequired, 1},
		{"power without a phrase, protection by name", protectByName, power(100, proxmoxsafe.ActionShutdown, false), proxmoxsafe.ErrApprovalRequired, 1},
		{"power refused by state", nil, power(101, proxmoxsafe.ActionShutdown, true), proxmoxsafe.ErrPrecondition, 1},
		{"snapshot approved", nil, snapshot(true), nil, 2},
		{"snapshot approved, protection by name", protectByName, snapshot(true), nil, 2},
		{"snapshot without a phrase", nil, snapshot(false), proxmoxsafe.ErrApprovalRequired, 1},
		{"snapshot delete approved", snapshotAdmin, deleteSnap, nil, 2},
		// The target node and Proxmox's migration precheck are read with
		// the state too.
		{"migrate approved", func(c *proxmoxsafe.Config) {
			c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassMigrate)
		}, func(e *env) error {
			in := proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, TargetNode: "pve2", Online: true}
			in.Approval = in.ApprovalPhrase()
			_, err := e.client.MigrateGuest(t.Context(), in)
			return err
		}, nil, 2},
		{"snapshot rollback approved", snapshotAdmin, rollback, nil, 2},
		// An approver that may have taken minutes: the state is read again
		// (all reads at once), then the request.
		{"power, slow approver", func(c *proxmoxsafe.Config) {
			useApprover(c, approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error { return nil }))
		}, power(100, proxmoxsafe.ActionShutdown, false), nil, 3},
		{"snapshot, slow approver, protection by name", func(c *proxmoxsafe.Config) {
			protectByName(c)
			useApprover(c, approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error { return nil }))
		}, snapshot(false), nil, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := tripEnv(t, tt.mod)
			warm(t, e)
			err := tt.call(e)
			reqs := e.requests()
			mut := e.fake.MutatingRequests()
			switch {
			case tt.refused == nil && err != nil:
				t.Fatalf("err = %v", err)
			case tt.refused != nil && !errors.Is(err, tt.refused):
				t.Fatalf("err = %v, want %v", err, tt.refused)
			case tt.refused == nil && len(mut) != 1:
				t.Fatalf("mutating requests = %v, want one", reqLines(mut))
			case tt.refused != nil && len(mut) != 0:
				t.Fatalf("mutating requests = %v, want none", reqLines(mut))
			}
			if d := proxmoxtest.SequentialDepth(reqs); d > tt.maxDepth {
				t.Errorf("%d sequential round trips, want at most %d: %v", d, tt.maxDepth, reqLines(reqs))
				for _, r := range reqs {
					t.Logf("%s %s %v %v", r.Method, r.Path, r.Start.Sub(reqs[0].Start), r.End.Sub(reqs[0].Start))
				}
			}
			// The mutating request goes out after every read has ended.
			if len(mut) == 1 {
				for _, r := range reqs {
					if r.Method == http.MethodGet && (r.End.IsZero() || r.End.After(mut[0].Start)) {
						t.Errorf("read %s still running when the request was sent", r.Path)
					}
				}
			}
		})
	}
}

// TestMutationReadFails: a failed read refuses with no mutating request,
// and the verdict is the one reading in turn gives: a status read that
// fails is reported even while a later read is still held, and the held
// read is cancelled (the call does not wait for it); a later read's
// failure does not hide what an earlier one refuses.
func TestMutationReadFails(t *testing.T) {
	t.Parallel()
	shutdown := func(vmid int) proxmoxsafe.GuestPowerInput {
		in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: vmid}, Action: proxmoxsafe.ActionShutdown}
		in.Approval = in.ApprovalPhrase()
		return in
	}
	t.Run("status fails, tasks held", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ProtectedNames = []string{"nothere"} })
		hold := make(chan struct{}) // never closed: only a cancellation frees the read
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks", Hold: hold})
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/status/current", Status: 500, Reason: "broken"})
		_, err := e.client.GuestPower(t.Context(), shutdown(100))
		var pre *proxmoxsafe.PreconditionReadError
		if !errors.As(err, &pre) || !strings.Contains(err.Error(), "status/current") || strings.Contains(err.Error(), "no answer within") {
			t.Fatalf("err = %v, want the status read's failure", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests after a refusal: %v", reqLines(m))
		}
	})
	t.Run("tasks fail, the state refuses first", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks", Status: 500, Reason: "broken"})
		_, err := e.client.GuestPower(t.Context(), shutdown(101)) // stopped
		if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "already stopped") {
			t.Fatalf("err = %v, want the state's refusal", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests after a refusal: %v", reqLines(m))
		}
	})
	t.Run("tasks fail", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks", Status: 500, Reason: "broken"})
		_, err := e.client.GuestPower(t.Context(), shutdown(100))
		var pre *proxmoxsafe.PreconditionReadError
		if !errors.As(err, &pre) || !strings.Contains(err.Error(), "/nodes/pve1/tasks") {
			t.Fatalf("err = %v, want the task read's failure", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests after a refusal: %v", reqLines(m))
		}
	})
}
