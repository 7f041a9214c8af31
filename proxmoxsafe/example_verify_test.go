package proxmoxsafe_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Wait for a power action and check the guest's state, in one call.
func ExampleClient_GuestPower_wait() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}, Action: proxmoxsafe.ActionStart}
	in.Approval = in.ApprovalPhrase()
	// Wait up to 30 s (the default; the operator's Config.MaxWait caps it).
	in.Wait = &proxmoxsafe.WaitOptions{Timeout: 30 * time.Second}

	r, err := client.GuestPower(context.Background(), in)
	switch {
	case errors.Is(err, proxmoxsafe.ErrTaskFailed):
		// Submitted, and the task failed: r.Outcome has the log tail.
		fmt.Println("failed:", r.Outcome.ExitStatus, r.Outcome.LogTail)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(r.Outcome.Status, r.Outcome.Observed)
	// Output:
	// completed running
}

// Submit first, verify later: a receipt is proof of submission only.
func ExampleClient_Verify() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "before_upgrade"}
	in.Approval = in.ApprovalPhrase()
	r, err := client.SnapshotGuest(context.Background(), in)
	if err != nil {
		log.Fatal(err)
	}

	out, err := client.Verify(context.Background(), r, &proxmoxsafe.WaitOptions{
		OnProgress: func(p proxmoxsafe.Progress) { fmt.Println("progress:", p.Phase) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Status, "-", out.Observed)
	// Output:
	// progress: task_running
	// progress: done
	// completed - snapshot before_upgrade present
}
