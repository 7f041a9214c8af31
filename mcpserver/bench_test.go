package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"runtime/metrics"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	check := checkText
	validateOutputs, checkText = false, nil
	b.Cleanup(func() { validateOutputs, checkText = true, check })
}

// BenchmarkStructuredResult measures building a list_guests result of a
// default page (200 guests): text is what the server does (the JSON once,
// then its text form), json the JSON alone copied into the text, as the
// text carried it before, for comparison.
func BenchmarkStructuredResult(b *testing.B) {
	fake := proxmoxtest.NewServer(benchCluster())
	b.Cleanup(fake.Close)
	client := newClient(b, fake, defaultPolicy(), "", newMemAudit(), nil)
	res, err := client.ListGuests(b.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			structuredResult("Listed 200 of 900 guests", res)
		}
	})
	st, err := client.GuestStatus(b.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: res.Guests[0].Node, Type: res.Guests[0].Type, VMID: res.Guests[0].VMID}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("small-text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			structuredResult("VM 100", st)
		}
	})
	b.Run("small-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			buf.WriteString("VM 100\n")
			appendCompactJSON(&buf, st)
			_ = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: buf.String()}}, StructuredContent: json.RawMessage(buf.Bytes()[7:])}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			buf.WriteString("Listed 200 of 900 guests\n")
			appendCompactJSON(&buf, res)
			_ = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: buf.String()}}, StructuredContent: json.RawMessage(buf.Bytes()[25:])}
		}
	})
}

// BenchmarkGuestStatusMCP measures one small read (guest_status: one GET
// of status/current, a result of about 1 KB) through an in-memory MCP
// session, logging as the binary does (text, info level): the per-call
// cost this package adds around the library call (argument validation,
// middleware, the log line, result building) on top of go-sdk's. Compare
// with BenchmarkGuestStatusLibrary.
func BenchmarkGuestStatusMCP(b *testing.B) {
	productionMode(b)
	ctx := b.Context()
	cluster := proxmoxtest.DemoCluster()
	fake := proxmoxtest.NewServer(cluster)
	b.Cleanup(fake.Close)
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	server := New(newClient(b, fake, defaultPolicy(), "", newMemAudit(), logger), &Options{Logger: logger})
	cs := connect(b, ctx, server, "")
	g := cluster.Guests[0]
	args := map[string]any{"node": g.Node, "type": g.Type, "vmid": g.VMID}
	b.ReportAllocs()
	defer reportGoroutines(b)()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolGuestStatus, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkGuestStatusLibrary measures the same read as a direct client call.
func BenchmarkGuestStatusLibrary(b *testing.B) {
	ctx := b.Context()
	cluster := proxmoxtest.DemoCluster()
	fake := proxmoxtest.NewServer(cluster)
	b.Cleanup(fake.Close)
	client := newClient(b, fake, defaultPolicy(), "", newMemAudit(), nil)
	g := cluster.Guests[0]
	in := proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: g.Node, Type: proxmoxsafe.GuestType(g.Type), VMID: g.VMID}}
	b.ReportAllocs()
	defer reportGoroutines(b)()
	for b.Loop() {
		if _, err := client.GuestStatus(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// reportGoroutines reports the goroutines started per operation (the
// whole process: client, server and the fake), when the returned function
// runs after the loop.
func reportGoroutines(b *testing.B) func() {
	created := func() uint64 {
		s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	before := created()
	return func() { b.ReportMetric(float64(created()-before)/float64(b.N), "goroutines/op") }
}
