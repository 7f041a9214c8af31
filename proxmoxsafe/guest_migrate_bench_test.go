package proxmoxsafe_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// BenchmarkMigratePlan measures a migration plan against the fake: every
// read the pipeline does before the approval (status/current, the target
// node in /cluster/resources, Proxmox's precheck, the running tasks), and
// reports how many upstream requests one plan sends.
//
//	go test -run '^$' -bench BenchmarkMigratePlan -benchmem ./proxmoxsafe
func BenchmarkMigratePlan(b *testing.B) {
	fake, c := benchMigrateClient(b)
	in := proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, TargetNode: "pve2", Online: true, WithLocalDisks: true, Controls: proxmoxsafe.Controls{Plan: true}}
	before := len(fake.Requests())
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.MigrateGuest(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(fake.Requests())-before)/float64(b.N), "requests/op")
}

// benchMigrateClient is a client for migrateCluster with the migrate
// class on pve1 and pve2, logging and auditing to nowhere.
func benchMigrateClient(b *testing.B) (*proxmoxtest.Server, *proxmoxsafe.Client) {
	b.Helper()
	fake := proxmoxtest.NewServer(migrateCluster(""))
	b.Cleanup(fake.Close)
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: canary, Fingerprint: fake.Fingerprint(),
		Logger: slog.New(slog.DiscardHandler),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassMigrate}},
		Audit:  auditlog.New(io.Discard, nil),
	})
	if err != nil {
		b.Fatal(err)
	}
	return fake, c
}
