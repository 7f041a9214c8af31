package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// benchCluster is large enough for a full default page (200 guests).
func benchCluster() *proxmoxtest.Cluster { return proxmoxtest.GenerateCluster(3, 300, 1) }

// BenchmarkListGuestsMCP measures one list_guests call through an
// in-memory MCP session: the library call plus schema validation, JSON
// encoding and the transport. Compare with BenchmarkListGuestsLibrary.
func BenchmarkListGuestsMCP(b *testing.B) {
	productionMode(b)
	ctx := b.Context()
	f := newFixture(b, ctx, "", fixtureConfig{cluster: benchCluster()})
	b.ReportAllocs()
	for b.Loop() {
		res := f.call(b, ctx, ToolListGuests, nil)
		if res.IsError {
			b.Fatal(text(b, res))
		}
	}
}

// BenchmarkListGuestsLibrary measures the same listing as a direct client call.
func BenchmarkListGuestsLibrary(b *testing.B) {
	ctx := b.Context()
	fake := proxmoxtest.NewServer(benchCluster())
	b.Cleanup(fake.Close)
	client := newClient(b, fake, defaultPolicy(), "", newMemAudit(), nil)
	b.ReportAllocs()
	for b.Loop() {
		res, err := client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Guests) != proxmoxsafe.DefaultListLimit {
			b.Fatalf("%d guests", len(res.Guests))
		}
	}
}

// productionMode turns off the output validation TestMain turns on for
// tests (served.go), so a benchmark measures what production runs.
// Benchmarks run one at a time, after the tests.
func productionMode(b *testing.B) {
	validateOutputs = false
	b.Cleanup(func() { validateOutputs = true })
}
