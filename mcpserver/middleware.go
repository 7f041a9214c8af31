package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Outcomes of a tool call, as logged by [LoggingMiddleware].
const (
	// OutcomeOK: the tool succeeded.
	OutcomeOK = "ok"
	// OutcomeRefused: the call was refused before anything was done
	// (invalid arguments, policy, precondition, approval, audit).
	OutcomeRefused = "refused"
	// OutcomeError: anything else (Proxmox failed, unknown tool, panic, …).
	OutcomeError = "error"
)

// RecoverMiddleware returns receiving middleware that turns a panic in any
// request handler into an error instead of killing the process (go-sdk does
// not recover). A panicking tools/call becomes a tool result with isError
// and a message saying what is known: nothing was done when no mutating
// request of the call had left for Proxmox (panic.go), else the outcome is
// unknown. Other methods get a JSON-RPC
// internal error. The panic value and stack go to logger (nil discards),
// never to the client.
func RecoverMiddleware(logger *slog.Logger) mcp.Middleware {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			ctx = watchSends(ctx) // what a recovered panic says (panic.go)
			defer func() {
				if v := recover(); v != nil {
					tool := toolName(req)
					logPanic(ctx, logger, method, tool, v)
					if method == "tools/call" {
						res, err = panicResult(ctx, tool), nil
						return
					}
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal server error"}
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// toolName is the tool a tools/call names, sanitized and capped: for an
// unknown tool it is whatever the client sent.
func toolName(req mcp.Request) string {
	ctr, ok := req.(*mcp.CallToolRequest)
	if !ok || ctr.Params == nil {
		return ""
	}
	name, _ := sanitize.CapLine(ctr.Params.Name, 128)
	return name
}

func logPanic(ctx context.Context, logger *slog.Logger, method, tool string, v any) {
	logger.LogAttrs(ctx, slog.LevelError, "panic while handling MCP request",
		slog.String("method", method),
		slog.String("tool", tool),
		slog.String("panic", fmt.Sprint(v)),
		slog.String("stack", string(debug.Stack())))
}

// LoggingMiddleware returns receiving middleware that logs one line per
// tools/call: tool, duration and outcome (ok, refused or error), plus the
// refusal kind or the error text. It never logs argument values, so no
// approval text or other input reaches the log. logger nil discards.
func LoggingMiddleware(logger *slog.Logger) mcp.Middleware {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			growStack() // stack.go: one shallow copy instead of two deep ones
			start := time.Now()
			res, err := next(ctx, method, req)
			attrs := []slog.Attr{
				slog.String("tool", toolName(req)),
				slog.Duration("duration", time.Since(start)),
			}
			level := slog.LevelInfo
			outcome, detail := classify(res, err)
			attrs = append(attrs, slog.String("outcome", outcome))
			switch outcome {
			case OutcomeRefused:
				attrs = append(attrs, slog.String("reason", detail))
			case OutcomeError:
				level = slog.LevelWarn
				attrs = append(attrs, slog.String("error", detail))
			}
			logger.LogAttrs(ctx, level, "tool call", attrs...)
			return res, err
		}
	}
}

// refusalKinds are the library's refusal sentinels: a call that ended in
// one of them did nothing.
var refusalKinds = []error{
	proxmoxsafe.ErrInvalidInput,
	proxmoxsafe.ErrNotAllowed,
	proxmoxsafe.ErrPrecondition,
	proxmoxsafe.ErrApprovalRequired,
	proxmoxsafe.ErrAudit,
}

// argumentsPrefix starts go-sdk's message for arguments that fail the input
// schema (mcp/server.go, toolForErr).
const argumentsPrefix = `validating "arguments": `

// classify returns the outcome of a tools/call and a short detail: the
// refusal kind for refusals (never the message, which may quote input), the
// error text for errors.
func classify(res mcp.Result, err error) (outcome, detail string) {
	defer func() { detail, _ = sanitize.CapLine(detail, 512) }()
	if err != nil {
		return OutcomeError, err.Error()
	}
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok || ctr == nil || !ctr.IsError {
		return OutcomeOK, ""
	}
	terr := ctr.GetError()
	if terr == nil {
		return OutcomeError, "tool error"
	}
	for _, k := range refusalKinds {
		if errors.Is(terr, k) {
			return OutcomeRefused, k.Error()
		}
	}
	if strings.HasPrefix(terr.Error(), argumentsPrefix) || errors.Is(terr, errBadArguments) {
		return OutcomeRefused, proxmoxsafe.ErrInvalidInput.Error()
	}
	return OutcomeError, terr.Error()
}

// errBadArguments marks go-sdk argument errors after SchemaRefusalMiddleware
// rewrote them.
var errBadArguments = errors.New("arguments do not match the input schema")

// SchemaRefusalMiddleware returns receiving middleware that rewrites
// go-sdk's message for arguments that fail a tool's input schema so it
// reads like the library's validation errors: which tool, what is wrong,
// and that no action was taken. go-sdk refuses such calls before the tool
// runs, so for this package's mutation tools it also writes the "refused"
// audit record the library would have written (through client; nil writes
// none). [New] installs it; see [Middleware] for servers built with
// [AddTools].
func SchemaRefusalMiddleware(client *proxmoxsafe.Client) mcp.Middleware {
	return schemaRefusals(func(mcp.Request) *proxmoxsafe.Client { return client })
}

// schemaRefusals is SchemaRefusalMiddleware auditing through the client
// clientFor returns for the call (a fleet's: the cluster it names; nil
// writes no record).
func schemaRefusals(clientFor func(mcp.Request) *proxmoxsafe.Client) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return argumentErrors(clientFor, next)
	}
}

// mutationOp returns the library operation a mutation tool calls.
func mutationOp(tool string) (proxmoxsafe.Operation, bool) {
	for _, d := range toolList() {
		if d.info.Name == tool && !d.info.ReadOnly() && len(d.ops) > 0 {
			return d.ops[0], true
		}
	}
	return "", false
}

func argumentErrors(clientFor func(mcp.Request) *proxmoxsafe.Client, next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx = watchSends(ctx) // the call's one record of what it sent (content.go)
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		ctr, ok := res.(*mcp.CallToolResult)
		if !ok || ctr == nil || !ctr.IsError || ctr.GetError() == nil {
			return res, err
		}
		msg, found := strings.CutPrefix(ctr.GetError().Error(), argumentsPrefix)
		if !found {
			return res, err
		}
		tool := toolName(req)
		fields := schemaFields(tool, msg) // schemaerr.go
		what, rule := "do not match its input schema", "do not match the %s input schema"
		var rk *repeatedKeyError
		if errors.As(ctr.GetError(), &rk) { // arguments.go
			fields = []proxmoxsafe.FieldError{{Field: clean(rk.path, 64), Problem: repeatedKeyProblem}}
			what, rule = "repeat a key", "for %s repeat a key in one object"
		}
		verr := fmt.Errorf("%w: %w", errBadArguments, &proxmoxsafe.ValidationError{Fields: fields})
		text := fmt.Sprintf("invalid input: the arguments for %s %s: %s; no action was taken", tool, what, fieldsText(fields))
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: withErrorJSON(ctx, tool, text, verr)}}}
		out.SetError(verr)
		if op, ok := mutationOp(tool); ok {
			client := clientFor(req)
			if client == nil {
				return out, nil
			}
			// The reason names the rule, not the refused values.
			client.RecordRefusal(ctx, op, fmt.Errorf("%w: arguments "+rule+"; no action was taken", proxmoxsafe.ErrInvalidInput, tool))
		}
		return out, nil
	}
}
