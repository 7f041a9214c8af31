package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Benchmarks measure; they assert nothing about time. Run with
//
//	go test -run '^$' -bench . ./cmd/proxmox-safe-mcp

// BenchmarkColdStart is process start to an answered tools/list over stdio
// (initialize, tools/list, stdin close, exit), in --demo mode, which also
// starts the simulated cluster.
func BenchmarkColdStart(b *testing.B) {
	bin := builtBinary(b)
	audit := filepath.Join(b.TempDir(), "audit.jsonl")
	for b.Loop() {
		cmd := exec.Command(bin, "--demo", "--log-level", "error", "--audit-log", audit)
		cmd.Env = cleanEnv()
		cs, err := newClient().Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
		if err := cs.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListGuests compares one list_guests call through the binary over
// stdio (JSON-RPC framing, schema validation, the simulated cluster in the
// child) with the same library call made directly against a simulated
// cluster in this process. Both reach the fake over loopback TLS.
func BenchmarkListGuests(b *testing.B) {
	b.Run("stdio", func(b *testing.B) {
		cmd := exec.Command(builtBinary(b), "--demo", "--log-level", "error", "--audit-log", filepath.Join(b.TempDir(), "audit.jsonl"))
		cmd.Env = cleanEnv()
		cs, err := newClient().Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}}
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), params)
			if err != nil || res.IsError {
				b.Fatalf("list_guests: %v %v", err, res)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		srv := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
		defer srv.Close()
		client, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL:         srv.URL,
			TokenID:     proxmoxtest.DefaultTokenID,
			TokenSecret: proxmoxtest.DefaultTokenSecret,
			Fingerprint: srv.Fingerprint(),
		})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := client.ListGuests(b.Context(), proxmoxsafe.ListGuestsInput{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// builtBinary builds the command as users get it (go build), once per
// benchmark run: benchmarks measure the shipped binary, not the test
// binary the tests start (binary).
func builtBinary(b *testing.B) string {
	b.Helper()
	builtOnce.Do(func() {
		builtPath = filepath.Join(os.TempDir(), fmt.Sprintf("proxmox-safe-mcp-bench-%d", os.Getpid()))
		if out, err := exec.Command("go", "build", "-o", builtPath, ".").CombinedOutput(); err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		b.Fatal(builtErr)
	}
	return builtPath
}

var (
	builtOnce sync.Once
	builtPath string
	builtErr  error
)
