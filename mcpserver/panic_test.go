package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPanicMessageIsTrue: a panic recovered before one of our handlers ran
// says nothing was sent; after it started, that the outcome is unknown; a
// tool that is not ours is never claimed to have done nothing.
func TestPanicMessageIsTrue(t *testing.T) {
	t.Parallel()
	ctx := withHandlerTracking(context.Background())
	before := text(t, panicResult(ctx, ToolGuestPower))
	if !strings.Contains(before, "no action was taken") || strings.Contains(before, "unknown") {
		t.Errorf("before the handler: %q", before)
	}
	if e := errorOf(t, panicResult(ctx, ToolGuestPower)); e.Error.Kind != "internal" || e.Error.ActionTaken != "none" {
		t.Errorf("before the handler: %+v", e.Error)
	}
	other := text(t, panicResult(ctx, "someone_elses_tool"))
	if !strings.Contains(other, "outcome is unknown") {
		t.Errorf("a foreign tool: %q", other)
	}
	markHandlerEntered(ctx)
	after := panicResult(ctx, ToolGuestPower)
	if msg := text(t, after); !strings.Contains(msg, "outcome is unknown") {
		t.Errorf("after the handler started: %q", msg)
	}
	if e := errorOf(t, after); e.Error.ActionTaken != "unknown" {
		t.Errorf("after the handler started: %+v", e.Error)
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
			msg := wantError(t, res, "internal error in tool \"cluster_status\"", "outcome is unknown")
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
