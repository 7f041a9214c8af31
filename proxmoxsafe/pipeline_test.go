package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func powerIn(node string, typ proxmoxsafe.GuestType, vmid int, a proxmoxsafe.PowerAction) proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Action: a}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(a), in.Target())
	return in
}

func TestApprovalPhrase(t *testing.T) {
	t.Parallel()
	got := proxmoxsafe.ApprovalPhrase("shutdown", proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101})
	if got != "APPROVE shutdown pve1/qemu/101" {
		t.Errorf("power phrase = %q", got)
	}
	got = proxmoxsafe.ApprovalPhrase("snapshot", proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: "pre-up"})
	if got != "APPROVE snapshot pve1/lxc/200/pre-up" {
		t.Errorf("snapshot phrase = %q", got)
	}
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "s1", VMState: true, Description: "free text"}
	if got := in.ApprovalPhrase(); got != "APPROVE snapshot pve1/qemu/100/s1 vmstate=1" {
		t.Errorf("vmstate phrase = %q", got)
	}
	in.VMState = false
	if got := in.ApprovalPhrase(); got != "APPROVE snapshot pve1/qemu/100/s1" {
		t.Errorf("plain phrase = %q", got)
	}
}

// TestApprovalBindsParameters: an approval given for one parameter set is
// refused for another (issue 15 §2), with zero mutating requests, and the
// approver sees the parameters; the approved one is audited with them.
func TestApprovalBindsParameters(t *testing.T) {
	t.Parallel()
	plain := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "s1"}
	withMemory := plain
	withMemory.VMState = true
	for _, tc := range []struct {
		name     string
		approved proxmoxsafe.SnapshotGuestInput
		sent     proxmoxsafe.SnapshotGuestInput
	}{
		{"plain approval, memory requested", plain, withMemory},
		{"memory approval, plain requested", withMemory, plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := tc.sent
			in.Approval = tc.approved.ApprovalPhrase()
			_, err := e.client.SnapshotGuest(t.Context(), in)
			var ae *proxmoxsafe.ApprovalError
			if !errors.As(err, &ae) || ae.Required != tc.sent.ApprovalPhrase() || !ae.Given {
				t.Fatalf("err = %v, want an ApprovalError naming %q", err, tc.sent.ApprovalPhrase())
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after refusal: %v", reqLines(m))
			}
		})
	}
	t.Run("approved with memory", func(t *testing.T) {
		t.Parallel()
		var seen []proxmoxsafe.ApprovalParam
		e := newEnv(t, func(c *proxmoxsafe.Config) {
			useApprover(c, approverFunc(func(_ context.Context, req proxmoxsafe.ApprovalRequest) error {
				seen = req.Params
				return proxmoxsafe.PhraseApprover{}.Approve(t.Context(), req)
			}))
		})
		in := withMemory
		in.Approval = in.ApprovalPhrase()
		if _, err := e.client.SnapshotGuest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 || seen[0] != (proxmoxsafe.ApprovalParam{Name: "vmstate", Value: "1"}) {
			t.Errorf("approver saw params %v", seen)
		}
		if !strings.Contains(e.audit.String(), `"params":["vmstate=1"]`) {
			t.Errorf("audit log does not record the approved parameters:\n%s", e.audit.String())
		}
	})
}

func TestGuestPowerHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node   string
		typ    proxmoxsafe.GuestType
		vmid   int
		action proxmoxsafe.PowerAction
		task   string
	}{
		{"pve1", "qemu", 101, proxmoxsafe.ActionStart, "qmstart"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionShutdown, "qmshutdown"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionReboot, "qmreboot"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionStop, "qmstop"},
		{"pve1", "qemu", 102, proxmoxsafe.ActionStop, "qmstop"}, // a paused VM can be stopped
		{"pve2", "lxc", 201, proxmoxsafe.ActionStart, "vzstart"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionShutdown, "vzshutdown"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionReboot, "vzreboot"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionStop, "vzstop"},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ)+"/"+string(tc.action), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			rec, err := e.client.GuestPower(t.Context(), powerIn(tc.node, tc.typ, tc.vmid, tc.action))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Task.Node != tc.node || rec.Task.ID != itoa(tc.vmid) || !strings.HasPrefix(rec.UPID, "UPID:"+tc.node+":") {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/" + string(tc.action)
			if len(mut) != 1 || reqLine(mut[0]) != want || len(mut[0].Form) != 0 {
				t.Errorf("mutating requests = %v, want one %q without params", reqLines(mut), want)
			}
			// The precondition reads come first: the guest's state, then its
			// node's active tasks for this guest.
			reqs := e.requests()
			all := reqLines(reqs)
			wantAll := []string{
				"GET /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/current",
				"GET /nodes/" + tc.node + "/tasks",
				want,
			}
			if !slices.Equal(all, wantAll) {
				t.Fatalf("requests = %v, want %v", all, wantAll)
			}
			if q := reqs[1].Query; q.Get("source") != "active" || q.Get("vmid") != itoa(tc.vmid) {
				t.Errorf("active-task query = %v, want source=active and vmid=%d", q, tc.vmid)
			}
			for _, ev := range []string{`"event":"approved"`, `"event":"submitted"`, rec.UPID} {
				if !strings.Contains(e.audit.String(), ev) {
					t.Errorf("audit log lacks %s:\n%s", ev, e.audit.String())
				}
			}
			if sum, err := auditlog.Verify(strings.NewReader(e.audit.String()), nil); err != nil || sum.Records != 3 {
				t.Errorf("audit log verifies %d records (anchor, approved, submitted), err %v", sum.Records, err)
			}
		})
	}
}

func TestGuestPowerHAManaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve2", "qemu", 105, proxmoxsafe.ActionShutdown))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.HAManaged || rec.Task.Type != "hastop" || !strings.Contains(rec.Note, "HA manager") {
		t.Errorf("receipt = %+v", rec)
	}
}

func TestSnapshotGuestHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   proxmoxsafe.SnapshotGuestInput
		form map[string]string
		task string
	}{
		{"qemu with vmstate", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "pre-upgrade", Description: "before the upgrade", VMState: true},
			map[string]string{"snapname": "pre-upgrade", "description": "before the upgrade", "vmstate": "1"}, "qmsnapshot"},
		{"qemu plain", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Name: "s1"},
			map[string]string{"snapname": "s1"}, "qmsnapshot"},
		{"lxc", proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "after_fix", Description: "two\nlines"},
			map[string]string{"snapname": "after_fix", "description": "two\nlines"}, "vzsnapshot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := tc.in
			in.Approval = in.ApprovalPhrase()
			rec, err := e.client.SnapshotGuest(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Target.Snapshot != in.Name {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + in.Node + "/" + string(in.Type) + "/" + itoa(in.VMID) + "/snapshot"
			if len(mut) != 1 || reqLine(mut[0]) != want {
				t.Fatalf("mutating requests = %v, want %q", reqLines(mut), want)
			}
			got := map[string]string{}
			for k := range mut[0].Form {
				got[k] = mut[0].Form.Get(k)
			}
			if len(got) != len(tc.form) {
				t.Errorf("form = %v, want %v", got, tc.form)
			}
			for k, v := range tc.form {
				if got[k] != v {
					t.Errorf("form[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestAuditFailureBlocksTheMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.Audit = auditlog.New(failingWriter{}, nil) })
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrAudit) || !strings.Contains(err.Error(), "no action was taken") {
		t.Fatalf("err = %v, want ErrAudit", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests after audit failure: %v", reqLines(m))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestUpstreamRefusalIsAuditedAsFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/qemu/100/status/stop", Status: 403, Reason: "Permission check failed (/vms/100, VM.PowerMgmt)"})
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if !strings.Contains(err.Error(), "lacks privilege VM.PowerMgmt on /vms/100") {
		t.Errorf("403 not explained: %v", err)
	}
	if !strings.Contains(e.audit.String(), `"event":"failed"`) {
		t.Errorf("audit lacks the failed record:\n%s", e.audit.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRunningTaskBlocksAnotherMutation(t *testing.T) {
	t.Parallel()
	t.Run("our own task", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		// The shutdown's task keeps running until someone polls it.
		if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)); err != nil {
			t.Fatal(err)
		}
		_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
		if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "task still running (qmshutdown") {
			t.Fatalf("err = %v, want a refusal naming the running qmshutdown", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 1 {
			t.Errorf("mutating requests = %v, want only the first shutdown", reqLines(m))
		}
	})
	t.Run("someone else's task", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "100", User: "root@pam"})
		in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Name: "during-backup"}
		in.Approval = in.ApprovalPhrase()
		_, err := e.client.SnapshotGuest(t.Context(), in)
		if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "vzdump") || !strings.Contains(err.Error(), "no action was taken") {
			t.Fatalf("err = %v, want a refusal naming the running vzdump", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests: %v", reqLines(m))
		}
	})
	t.Run("another guest's task does not block", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "101", User: "root@pam"})
		if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop)); err != nil {
			t.Fatal(err)
		}
	})
}

// blockingApprover holds approvals for guest 100 until released, so a
// second mutation can be attempted while the first is in the pipeline.
type blockingApprover struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingApprover) Name() string { return "blocking" }

func (b *blockingApprover) Approve(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
	if req.Target.VMID == 100 {
		b.entered <- struct{}{}
		<-b.release
	}
	return proxmoxsafe.PhraseApprover{}.Approve(ctx, req)
}

func TestConcurrentMutationsOfOneGuest(t *testing.T) {
	t.Parallel()
	ap := &blockingApprover{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := newEnv(t, func(c *proxmoxsafe.Config) { useApprover(c, ap) })
	first := make(chan error, 1)
	go func() {
		_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
		first <- err
	}()
	<-ap.entered // the first call holds guest 100
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "already being changed through this client (shutdown in progress)") {
		t.Errorf("second call: err = %v, want a refusal", err)
	}
	// Another guest is not blocked.
	if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)); err != nil {
		t.Errorf("other guest: %v", err)
	}
	close(ap.release)
	if err := <-first; err != nil {
		t.Errorf("first call: %v", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 2 {
		t.Errorf("mutating requests = %v, want the shutdown of 100 and the start of 101", reqLines(m))
	}
	// The claim is released: once the task is done, 100 can be changed again.
	e.fake.FinishTasks()
	if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStart)); err != nil {
		t.Errorf("after release: %v", err)
	}
}
