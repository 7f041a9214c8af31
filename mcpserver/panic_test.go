package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestPanicMessageIsTrue: a panic recovered while no mutating request of
// the call had left says nothing was sent, wherever it came; once one may
// have, that the outcome is unknown; a tool that is not ours is never
// claimed to have done nothing, nor is a call without a record of what it
// sent.
func TestPanicMessageIsTrue(t *testing.T) {
	t.Parallel()
	ctx, watch := proxmoxsafe.WatchSends(context.Background())
	before := text(t, panicResult(ctx, ToolGuestPower))
	if !strings.Contains(before, "no action was taken") || strings.Contains(before, "unknown") {
		t.Errorf("nothing sent: %q", before)
	}
	if e := errorOf(t, panicResult(ctx, ToolGuestPower)); e.Error.Kind != "internal" || e.Error.ActionTaken != "none" {
		t.Errorf("nothing sent: %+v", e.Error)
	}
	other := text(t, panicResult(ctx, "someone_elses_tool"))
	if !strings.Contains(other, "outcome is unknown") {
		t.Errorf("a foreign tool: %q", other)
	}
	if e := errorOf(t, panicResult(ctx, "someone_elses_tool")); e.Error.ActionTaken != "unknown" {
		t.Errorf("a foreign tool: %+v", e.Error)
	}
	if msg := text(t, panicResult(context.Background(), ToolGuestPower)); !strings.Contains(msg, "outcome is unknown") {
		t.Errorf("without a watch: %q", msg)
	}
	markSent(t, ctx, watch)
	after := panicResult(ctx, ToolGuestPower)
	if msg := text(t, after); !strings.Contains(msg, "outcome is unknown") {
		t.Errorf("after a mutating request: %q", msg)
	}
	if e := errorOf(t, after); e.Error.ActionTaken != "unknown" {
		t.Errorf("after a mutating request: %+v", e.Error)
	}
}

func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv)+"/handler", func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{opts: Options{beforeCall: func(tool string) {
				if tool == ToolClusterStatus {
					panic("injected test panic")
				}
			}}})
			res := f.call(t, ctx, ToolClusterStatus, nil)
			msg := wantError(t, res, "internal error in tool \"cluster_status\"", "nothing was sent to Proxmox", "no action was taken")
			if strings.Contains(msg, "injected test panic") {
				t.Errorf("the panic value reached the client: %q", msg)
			}
			// The server is still alive.
			if res := f.call(t, ctx, ToolListGuests, nil); res.IsError {
				t.Errorf("call after panic failed: %s", text(t, res))
			}
			logs := f.logs.String()
			if !strings.Contains(logs, "injected test panic") || !strings.Contains(logs, "goroutine") {
				t.Errorf("panic and stack not logged: %s", logs)
			}
			if !strings.Contains(logs, `"outcome":"error"`) {
				t.Errorf("the panicking call was not logged as an error: %s", logs)
			}
		})
		t.Run(protoName(pv)+"/middleware", func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			// A tool without its own recover: only RecoverMiddleware saves the process.
			f := newFixture(t, ctx, pv, fixtureConfig{extra: func(s *mcp.Server) {
				s.AddTool(&mcp.Tool{Name: "boom", InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("raw handler panic") })
			}})
			res := f.call(t, ctx, "boom", nil)
			wantError(t, res, "internal error in tool \"boom\"")
			if res := f.call(t, ctx, ToolClusterStatus, nil); res.IsError {
				t.Errorf("call after panic failed: %s", text(t, res))
			}
			if !strings.Contains(f.logs.String(), "raw handler panic") {
				t.Error("panic not logged")
			}
		})
	}
}

// markSent makes one mutating request (an approved stop of VM 100 of the
// fake) with ctx, so that its watch has seen one.
func markSent(t *testing.T, ctx context.Context, watch *proxmoxsafe.SendWatch) {
	t.Helper()
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	t.Cleanup(fake.Close)
	client := newClient(t, fake, defaultPolicy(), "", newMemAudit(), nil)
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Action: proxmoxsafe.ActionStop}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(in.Action), in.Target())
	if _, err := client.GuestPower(ctx, in); err != nil || !watch.MutatingSent() {
		t.Fatalf("stop: %v (watched: %v)", err, watch.MutatingSent())
	}
}
