package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
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
	// Cluster is the cluster the call was for, from [FleetObserveMiddleware]:
	// a configured name, FleetAll for a read across several, "" when the
	// call named none that is configured (and always from
	// ObserveMiddleware).
	Cluster string
}

// ObserveMiddleware returns receiving middleware that calls observe after
// every tools/call, for metrics. observe runs on the call's goroutine
// and must not block. Install it outermost so that it sees what the
// client sees: server.AddReceivingMiddleware(mcpserver.ObserveMiddleware(f)).
func ObserveMiddleware(observe func(ToolCall)) mcp.Middleware {
	return observing(func(mcp.Request) string { return "" }, observe)
}

// FleetObserveMiddleware is [ObserveMiddleware] for a server of clients
// (NewFleet) that also reports each call's cluster (ToolCall.Cluster):
// with one client its name, with several the configured one the call
// names, FleetAll for a read across several ("*" or a list), else "". So
// the cluster, as a metrics label, only takes the configured names,
// whatever a client sends.
func FleetObserveMiddleware(clients []*proxmoxsafe.Client, observe func(ToolCall)) mcp.Middleware {
	checkFleet(clients)
	if len(clients) == 1 {
		name := clients[0].Cluster().Name
		return observing(func(mcp.Request) string { return name }, observe)
	}
	byName := fleetByName(clients)
	return observing(func(req mcp.Request) string {
		if name, ok := namedCluster(req); ok {
			if _, known := byName[name]; known || (name == FleetAll && fleetReads[toolName(req)] != nil) {
				return name
			}
			return ""
		}
		ctr, ok := req.(*mcp.CallToolRequest)
		if !ok || ctr.Params == nil || fleetReads[toolName(req)] == nil {
			return ""
		}
		var args struct {
			Cluster []string `json:"cluster"`
		}
		if json.Unmarshal(ctr.Params.Arguments, &args) == nil && len(args.Cluster) > 0 {
			return FleetAll // a list of names: a read across several
		}
		return ""
	}, observe)
}

func observing(cluster func(mcp.Request) string, observe func(ToolCall)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			call := ToolCall{Tool: "unknown", Duration: time.Since(start), Cluster: cluster(req)}
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
	if name == ToolClusterList { // a fleet's own tool (cluster_list.go), not in the list
		return true
	}
	for _, d := range toolList() {
		if d.info.Name == name {
			return true
		}
	}
	return false
}
