package proxmoxsafe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// exampleCluster is a tiny fake cluster for the examples.
func exampleCluster() *proxmoxtest.Cluster {
	return &proxmoxtest.Cluster{
		Name: "homelab",
		Nodes: []*proxmoxtest.Node{
			{Name: "pve1", Online: true, IP: "192.0.2.11", CPUs: 8, MaxMem: 32 << 30, Mem: 4 << 30, Uptime: 86400, LoadAvg: [3]float64{0.42, 0.3, 0.2}, Kernel: "6.17.2-1-pve"},
			{Name: "pve2", Online: true, IP: "192.0.2.12", CPUs: 8, MaxMem: 32 << 30},
		},
		Guests: []*proxmoxtest.Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web", Status: "running", Tags: []string{"prod"}},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "db", Status: "stopped", Tags: []string{"prod"}},
			{VMID: 200, Node: "pve2", Type: "lxc", Name: "dns", Status: "running"},
		},
	}
}

// exampleClient connects to a fake cluster with the default profile.
func exampleClient(fake *proxmoxtest.Server) *proxmoxsafe.Client {
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         fake.URL,
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(),
		Policy: proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1", "pve2"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot},
		},
		Audit: auditlog.New(&bytes.Buffer{}, nil),
	})
	if err != nil {
		log.Fatal(err)
	}
	return c
}

func ExampleNew() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()

	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         fake.URL, // e.g. "https://pve1.example:8006"
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: proxmoxtest.DefaultTokenSecret,
		// A self-signed Proxmox certificate is trusted by pinning it.
		Fingerprint: fake.Fingerprint(),
		// The zero Policy allows cluster-wide reads only.
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client.Enabled(proxmoxsafe.ClassPower))

	// Plain http:// is refused unless explicitly allowed.
	_, err = proxmoxsafe.New(proxmoxsafe.Config{URL: "http://pve1:8006", TokenID: "a@pve!t", TokenSecret: "x"})
	fmt.Println(err)
	// Output:
	// false
	// proxmoxsafe: invalid config: URL uses plain http://, which would send the API token in clear text; use https:// or set AllowInsecureHTTP
}

func ExampleClient_ClusterStatus() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	st, err := client.ClusterStatus(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Name, st.Quorate, st.Version)
	for _, n := range st.Nodes {
		fmt.Println(n.Name, n.Online, n.IP)
	}
	// Output:
	// homelab true 9.1.1
	// pve1 true 192.0.2.11
	// pve2 true 192.0.2.12
}

func ExampleClient_NodeStatus() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	st, err := client.NodeStatus(context.Background(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Node, st.CPUs, st.Uptime, st.LoadAvg[0], st.Kernel)

	// Nodes off the allowlist are refused before any request.
	_, err = client.NodeStatus(context.Background(), proxmoxsafe.NodeStatusInput{Node: "pve9"})
	fmt.Println(errors.Is(err, proxmoxsafe.ErrNotAllowed))
	// Output:
	// pve1 8 86400 0.42 6.17.2-1-pve
	// true
}

func ExampleClient_ListGuests() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	page, err := client.ListGuests(context.Background(), proxmoxsafe.ListGuestsInput{Tag: "prod", Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	for page != nil {
		for _, g := range page.Guests {
			fmt.Println(g.VMID, g.Name, g.Status, g.Manageable)
		}
		if page.NextCursor == "" {
			break
		}
		page, err = client.ListGuests(context.Background(), proxmoxsafe.ListGuestsInput{Tag: "prod", Limit: 1, Cursor: page.NextCursor})
		if err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// 100 web running true
	// 101 db stopped true
}

func ExampleClient_GuestPower() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)
	ctx := context.Background()

	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, Action: proxmoxsafe.ActionShutdown}

	// Without approval the call is refused and names the exact phrase.
	_, err := client.GuestPower(ctx, in)
	var ae *proxmoxsafe.ApprovalError
	if errors.As(err, &ae) {
		fmt.Println(ae.Required)
	}

	in.Approval = in.ApprovalPhrase()
	receipt, err := client.GuestPower(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(receipt.Task.Type, receipt.Task.ID)

	// The receipt proves submission; waiting proves completion.
	st, err := client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: receipt.UPID}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ExitStatus)
	// Output:
	// APPROVE shutdown pve1/qemu/100
	// qmshutdown 100
	// OK
}

func ExampleClient_SnapshotGuest() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)

	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "before-upgrade", Description: "taken by automation"}
	in.Approval = in.ApprovalPhrase()
	fmt.Println(in.Approval)
	receipt, err := client.SnapshotGuest(context.Background(), in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(receipt.Task.Type)
	// Output:
	// APPROVE snapshot pve2/lxc/200/before-upgrade
	// vzsnapshot
}

func ExampleClient_TaskState() {
	fake := proxmoxtest.NewServer(exampleCluster())
	defer fake.Close()
	client := exampleClient(fake)
	ctx := context.Background()

	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}, Action: proxmoxsafe.ActionStart}
	in.Approval = in.ApprovalPhrase()
	receipt, err := client.GuestPower(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	st, err := client.TaskState(ctx, proxmoxsafe.TaskStateInput{Node: receipt.Task.Node, UPID: receipt.UPID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Status)
	// Output:
	// running
}
