package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolCall is what [ObserveMiddleware] reports of one tools/call: never
// the arguments.
type ToolCall struct {
	// Tool is the tool's name, or "unknown" for a name this package does
	// not declare (a client chooses it: as a metrics label it must not
	// grow without bound).
	Tool string
	// Outcome is OutcomeOK, OutcomeRefused or OutcomeError.
	Outcome string
	// Kind is the refusal's kind ("approval required", "not allowed",
	// …) for OutcomeRefused, else "".
	Kind string
	// Duration is how long the call took, middleware to middleware.
	Duration time.Duration
}

// ObserveMiddleware returns receiving middleware that calls observe after
// every tools/call, for metrics. observe runs on the call's goroutine
// and must not block. Install it outermost so that it sees what the
// client sees: server.AddReceivingMiddleware(mcpserver.ObserveMiddleware(f)).
func ObserveMiddleware(observe func(ToolCall)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			call := ToolCall{Tool: "unknown", Duration: time.Since(start)}
			if name := toolName(req); declared(name) {
				call.Tool = name
			}
			call.Outcome, call.Kind = classify(res, err)
			if call.Outcome != OutcomeRefused {
				call.Kind = ""
			}
			observe(call)
			return res, err
		}
	}
}

// declared reports whether name is one of this package's tools.
func declared(name string) bool {
	for _, d := range toolList() {
		if d.info.Name == name {
			return true
		}
	}
	return false
}
