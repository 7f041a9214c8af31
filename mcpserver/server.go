package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// ServerName is the name reported in the MCP Implementation.
const ServerName = "proxmox-safe-mcp"

// Options configures [New] and [AddTools]. The zero value (and nil) is valid.
type Options struct {
	// Version is reported in the MCP Implementation; "" means "dev".
	Version string
	// Logger gets one line per tool call (tool, duration, outcome; never
	// argument values) and the stack of any recovered panic. nil discards.
	Logger *slog.Logger
	// ReadOnly hides and refuses every mutation tool, whatever the client's
	// policy enables: an extra upper bound for this server.
	ReadOnly bool
	// ApprovalPageURL is the URL of the operator's approval page (package
	// approvalweb), ending in "/", when one is served. A call refused by
	// the grant level then names the grant's page in its refusal, and a
	// client that declared URL-mode elicitation gets a URL elicitation
	// (JSON-RPC error -32042) pointing there instead. "" means no page:
	// the refusal names only the CLI. [New] and [AddTools] panic on a
	// malformed URL.
	ApprovalPageURL string
	// Selection hides tools the policy would offer (toolsets.go): only the
	// tools it selects are listed and callable. It never offers a tool
	// the policy does not. [New] and [AddTools] panic on an unknown
	// toolset or tool name (check it first with [Selection.Check]).
	Selection Selection

	// beforeCall, when set, runs at the start of every tool handler. Tests
	// use it to inject panics.
	beforeCall func(tool string)
}

func (o *Options) orDefault() *Options {
	if o == nil {
		return &Options{}
	}
	return o
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// New returns an MCP server offering the tools of [Tools] for client (and
// the resources and prompts built on the tools it serves: docs/RESOURCES.md), with
// the instructions of [ServerInstructions], and with [LoggingMiddleware] and
// [RecoverMiddleware] installed. opts may be nil. New panics if client is
// nil: that is a programmer error.
func New(client *proxmoxsafe.Client, opts *Options) *mcp.Server {
	if client == nil {
		panic("mcpserver.New: nil client")
	}
	o := opts.orDefault()
	version := o.Version
	if version == "" {
		version = "dev"
	}
	// The instructions and the registration share one list of the tools
	// offered: each tool's class lookups cost a start ~33,000 instructions
	// (callgrind) every time the list is made.
	defs := enabledTools(client, o)
	s := mcp.NewServer(&mcp.Implementation{
		Name:    ServerName,
		Title:   serverTitle(client, o),
		Version: version,
	}, &mcp.ServerOptions{
		Instructions: instructionsFor(defs, client.MaxWait()),
		Logger:       newSDKLogger(o),
	})
	addTools(s, client, o, true, defs)
	s.AddReceivingMiddleware(Middleware(client, o)...)
	return s
}

// serverTitle names the policy in force, so a person choosing among
// connected servers sees which one may change what: "Proxmox VE
// (read-only)", "(safe)", "(responder)", "(admin)", a profile plus
// gateway-write as "(admin + gateway-write)", any other set of classes
// "(custom policy)".
func serverTitle(client *proxmoxsafe.Client, o *Options) string {
	pol := client.Policy()
	enabled := map[proxmoxsafe.Class]bool{}
	for _, c := range pol.Classes {
		enabled[c] = true
	}
	if pol.ReadOnly || o.ReadOnly || len(enabled) == 0 {
		return "Proxmox VE (read-only)"
	}
	gatewayWrite := enabled[proxmoxsafe.ClassGatewayWrite]
	delete(enabled, proxmoxsafe.ClassGatewayWrite)
	for _, p := range proxmoxsafe.Profiles() {
		classes, _ := p.Classes()
		if len(classes) != len(enabled) || len(classes) == 0 {
			continue
		}
		same := true
		for _, c := range classes {
			same = same && enabled[c]
		}
		if !same {
			continue
		}
		if gatewayWrite {
			return "Proxmox VE (" + string(p) + " + gateway-write)"
		}
		return "Proxmox VE (" + string(p) + ")"
	}
	return "Proxmox VE (custom policy)"
}

// Middleware returns the receiving middleware [New] installs, outermost
// first: [LoggingMiddleware], one that copies an error result's
// machine-readable line into `_meta` ([ErrorMetaKey]),
// [SchemaRefusalMiddleware], [RecoverMiddleware], and one that treats
// `"arguments": null` like `{}`. A server built with
// [AddTools] keeps every promise of one built with New once it installs
// them: server.AddReceivingMiddleware(mcpserver.Middleware(client, opts)...).
// They apply to every method of the server, so the caller's own tools get
// panic recovery and one log line per call too. opts may be nil.
func Middleware(client *proxmoxsafe.Client, opts *Options) []mcp.Middleware {
	o := opts.orDefault()
	// Logging outermost, so it also sees the result of a recovered panic.
	return []mcp.Middleware{LoggingMiddleware(o.Logger), errorMetaMiddleware, SchemaRefusalMiddleware(client), RecoverMiddleware(o.Logger), nullArgumentsMiddleware}
}

// AddTools registers the tools of [Tools] for client on server, with the
// resources and prompts built on those it serves, so they can be mounted
// into any go-sdk server. Register before the server is
// connected (go-sdk sends list_changed notifications otherwise).
//
// AddTools installs no middleware, since middleware applies to the whole
// server, which belongs to the caller. Each of these tools still recovers
// its own panics (turning them into tool errors and logging the stack to
// opts.Logger). Install [Middleware] with server.AddReceivingMiddleware as
// well: go-sdk refuses arguments that fail a tool's input schema before
// the tool runs, and only [SchemaRefusalMiddleware] can then write the
// "refused" audit record a mutation attempt must leave; it also rewrites
// go-sdk's message in the library's words. AddTools panics if server or
// client is nil, and when this package already registered one of these
// tools on server (a second AddTools with another client would otherwise
// silently replace the first client's tools).
func AddTools(server *mcp.Server, client *proxmoxsafe.Client, opts *Options) {
	if server == nil || client == nil {
		panic("mcpserver.AddTools: nil server or client")
	}
	o := opts.orDefault()
	addTools(server, client, o, false, enabledTools(client, o))
}

// addTools is AddTools for the tools defs (enabledTools); fresh says New
// just made server (addServed).
func addTools(server *mcp.Server, client *proxmoxsafe.Client, o *Options, fresh bool, defs []toolDef) {
	if o.ApprovalPageURL != "" {
		if err := checkApprovalPageURL(o.ApprovalPageURL); err != nil {
			panic(err)
		}
	}
	if err := o.Selection.Check(); err != nil {
		panic("mcpserver: " + err.Error())
	}
	a := &adapter{client: client, readOnly: o.ReadOnly, log: o.logger(), beforeCall: o.beforeCall, fresh: fresh, approvalPage: o.ApprovalPageURL}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.info.Name
	}
	claimToolNames(server, names) // registered.go: a second registration panics
	for _, d := range defs {
		d.register(server, d.served(client.MaxWait()), a) // served.go
	}
	addResources(server, a, names) // resources.go
	addAppResources(server, names) // metrics_chart_app.go
	addPrompts(server, names)      // prompts.go
}

// enabledTools returns the tools client and o offer, in listing order
// (toolDef.enabled).
func enabledTools(client *proxmoxsafe.Client, o *Options) []toolDef {
	var defs []toolDef
	for _, d := range toolList() {
		if d.enabled(client, o) {
			defs = append(defs, d)
		}
	}
	return defs
}

// newSDKLogger is go-sdk's logger: it logs every connection at INFO; only
// its warnings matter here.
func newSDKLogger(o *Options) *slog.Logger {
	return slog.New(minLevel{o.logger().Handler(), slog.LevelWarn})
}

// minLevel drops records below a level, whatever the wrapped handler allows.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.min}
}
