package proxmoxsafe_test

import (
	"context"
	"fmt"
	"log"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func ExampleClient_ListBackups() {
	fake := proxmoxtest.NewServer(exampleCluster()) // default storages: one backup per guest on "local"
	defer fake.Close()
	client := exampleClient(fake)

	res, err := client.ListBackups(context.Background(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local"})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range res.Backups {
		fmt.Println(b.VolID, b.Notes)
	}
	// Output:
	// local:backup/vzdump-qemu-101-2026_01_01-01_00_00.vma.zst db
	// local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst web
}

func ExampleClient_CephStatus() {
	fake := proxmoxtest.NewServer(exampleCluster()) // no Ceph installed
	defer fake.Close()
	client := exampleClient(fake)

	res, err := client.CephStatus(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Installed, res.Message)
	// Output:
	// false Ceph is not installed on this cluster (Proxmox: binary not installed: /usr/bin/ceph-mon)
}

func ExampleClient_Permissions() {
	c := exampleCluster()
	c.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {
		Secret: proxmoxtest.DefaultTokenSecret,
		Privileges: map[string][]string{
			"/":        {"Sys.Audit", "Sys.Console"},
			"/vms":     {"VM.Audit", "VM.PowerMgmt"},
			"/storage": {"Datastore.Audit"},
		},
	}}
	fake := proxmoxtest.NewServer(c)
	defer fake.Close()
	client := exampleClient(fake) // power and snapshot enabled on pve1, pve2

	rep, err := client.Permissions(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok:", rep.OK)
	for _, m := range rep.Missing {
		if !m.Optional {
			fmt.Println("missing", m.Privileges, "on", m.Path, "for", m.Operations)
			fmt.Println(" ", m.Command)
		}
	}
	for _, x := range rep.Excess {
		fmt.Println("beyond need:", x.Privilege, "dangerous:", x.Dangerous)
	}
	// Output:
	// ok: false
	// missing [VM.Snapshot] on /vms for [SnapshotGuest]
	//   pveum acl modify /vms --tokens 'automation@pve!mcp' --roles ProxmoxSafeMCP
	// beyond need: Sys.Console dangerous: true
}
