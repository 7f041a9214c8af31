package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

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
