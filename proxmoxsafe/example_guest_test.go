package proxmoxsafe_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// exampleGuestCluster is exampleCluster with a cloud-init VM, snapshots
// and some task history.
func exampleGuestCluster() *proxmoxtest.Cluster {
	c := exampleCluster()
	web := c.Guests[0]
	web.AgentEnabled = true
	web.Description = "Public web frontend"
	web.Config = map[string]string{"ciuser": "admin", "cipassword": "s3cret", "sshkeys": "ssh-ed25519%20AAAA...%20ops%40example"}
	web.Snapshots = []*proxmoxtest.Snapshot{
		{Name: "installed", Description: "fresh OS", SnapTime: 1735689600},
		{Name: "pre-upgrade", Parent: "installed", SnapTime: 1736294400, VMState: true},
		{Name: "try-php84", Parent: "installed", SnapTime: 1736899200},
	}
	web.CurrentSnapshot = "pre-upgrade" // rolled back after trying PHP 8.4
	return c
}

func ExampleClient_GuestStatus() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	st, err := client.GuestStatus(context.Background(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Name, st.Status, st.Paused, st.AgentEnabled, st.HAManaged, st.Tags)
	// Output:
	// web running false true false [prod]
}

func ExampleClient_GuestConfig() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	cfg, err := client.GuestConfig(context.Background(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Config["ciuser"], cfg.Config["cipassword"], cfg.Config["sshkeys"])
	fmt.Println(cfg.Config["description"])
	fmt.Println("redacted:", strings.Join(cfg.Redacted, ", "))
	// Output:
	// admin [redacted] [redacted]
	// Public web frontend
	// redacted: cipassword, sshkeys
}

func ExampleClient_ListSnapshots() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	snaps, err := client.ListSnapshots(context.Background(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range snaps.Snapshots {
		mark := ""
		if s.Current {
			mark = " <- current"
		}
		fmt.Printf("%s%s %s%s\n", strings.Repeat("  ", s.Depth), s.Name, s.Time.Format("2006-01-02"), mark)
	}
	fmt.Println(snaps.Total, "snapshots; current:", snaps.Current)
	// Output:
	// installed 2025-01-01
	//   pre-upgrade 2025-01-08 <- current
	//   try-php84 2025-01-15
	// 3 snapshots; current: pre-upgrade
}

func ExampleClient_TaskLog() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	// A finished backup with a long log, as the node would have it.
	var lines []string
	for i := 1; i <= 200; i++ {
		lines = append(lines, fmt.Sprintf("INFO: %d%% done", i/2))
	}
	task := fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "100", ExitStatus: "OK", Log: lines})

	tail, err := client.TaskLog(context.Background(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: task.UPID, Lines: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lines in the log:", tail.Total)
	for _, l := range tail.Lines {
		fmt.Println(l.N, l.Text)
	}
	// Output:
	// lines in the log: 201
	// 199 INFO: 99% done
	// 200 INFO: 100% done
	// 201 TASK OK
}

func ExampleClient_TaskStatus() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	task := fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "101", ExitStatus: "start failed: QEMU exited with code 1",
		Log: []string{"kvm: -drive file=/dev/pve/vm-101-disk-0: Could not open '/dev/pve/vm-101-disk-0': No such file or directory"}})

	rep, err := client.TaskStatus(context.Background(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: task.UPID, Lines: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Status, rep.Failed, rep.ExitStatus)
	fmt.Println(rep.Log.Lines[0].Text)
	// Output:
	// stopped true start failed: QEMU exited with code 1
	// TASK ERROR: start failed: QEMU exited with code 1
}

func ExampleClient_ListTasks() {
	fake := proxmoxtest.NewServer(exampleGuestCluster())
	defer fake.Close()
	client := exampleClient(fake)

	fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "100", StartTime: 1735689600, ExitStatus: "OK"})
	fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "101", StartTime: 1735693200, ExitStatus: "start failed: QEMU exited with code 1"})
	fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", StartTime: 1735696800, ExitStatus: "WARNINGS: 1"})

	all, err := client.ListTasks(context.Background(), proxmoxsafe.ListTasksInput{Node: "pve1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range all.Tasks {
		fmt.Println(t.StartTime.Format("15:04"), t.Type, t.ID, t.ExitStatus, t.Failed)
	}
	failed, err := client.ListTasks(context.Background(), proxmoxsafe.ListTasksInput{Node: "pve1", ErrorsOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", len(failed.Tasks))

	// Nodes off the allowlist are refused before any request.
	_, err = client.ListTasks(context.Background(), proxmoxsafe.ListTasksInput{Node: "pve9"})
	fmt.Println(errors.Is(err, proxmoxsafe.ErrNotAllowed))
	// Output:
	// 02:00 vzdump  WARNINGS: 1 false
	// 01:00 qmstart 101 start failed: QEMU exited with code 1 true
	// 00:00 qmstart 100 OK false
	// failed: 1
	// true
}

func ExampleClient_ClusterStatus_offlineNode() {
	c := exampleGuestCluster()
	c.Nodes[1].Online = false
	fake := proxmoxtest.NewServer(c)
	defer fake.Close()
	client := exampleClient(fake)

	st, err := client.ClusterStatus(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range st.Nodes {
		if n.Usage != nil {
			fmt.Printf("%s: %d CPUs, %d GiB of %d GiB memory\n", n.Name, n.Usage.MaxCPU, n.Usage.Mem>>30, n.Usage.MaxMem>>30)
		} else {
			fmt.Printf("%s: %s\n", n.Name, n.Problem)
		}
	}
	// Output:
	// pve1: 8 CPUs, 4 GiB of 32 GiB memory
	// pve2: offline: the cluster does not see this node, so it cannot be reached through the API
}
