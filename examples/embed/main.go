// Command embed mounts the proxmox-safe-mcp tools into your own go-sdk MCP
// server, next to a tool of your own.
//
// mcpserver.AddTools registers the Proxmox tools on any *mcp.Server; the
// server, its other tools and its middleware stay yours. Here the extra
// tool, "server_policy", reports the operator policy of the same
// proxmoxsafe.Client, so a model can see what it is allowed to do.
//
// Without -demo it serves MCP over stdio, configured from PVE_URL,
// PVE_API_TOKEN_ID, PVE_API_TOKEN_SECRET, PVE_TLS_FINGERPRINT and
// PVE_ALLOWED_NODES (read-only: no mutation class is enabled). With -demo
// it runs against an in-process simulated cluster and, as a self-check,
// connects an in-memory client, lists the tools, calls two of them, prints
// the results and exits:
//
//	go run ./examples/embed -demo
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// PolicyOutput is the result of our own tool.
type PolicyOutput struct {
	TokenID      string   `json:"token_id" jsonschema:"the Proxmox API token id in use (never the secret)"`
	AllowedNodes []string `json:"allowed_nodes" jsonschema:"nodes that node_status and mutations may target"`
	Classes      []string `json:"classes" jsonschema:"enabled mutation classes"`
	ReadOnly     bool     `json:"read_only"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "run against a simulated cluster, self-check and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	cfg := proxmoxsafe.Config{
		URL:         os.Getenv("PVE_URL"),
		TokenID:     os.Getenv("PVE_API_TOKEN_ID"),
		TokenSecret: os.Getenv("PVE_API_TOKEN_SECRET"),
		Fingerprint: os.Getenv("PVE_TLS_FINGERPRINT"),
	}
	for n := range strings.SplitSeq(os.Getenv("PVE_ALLOWED_NODES"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.Policy.AllowedNodes = append(cfg.Policy.AllowedNodes, n)
		}
	}
	if *demo {
		cluster := proxmoxtest.DemoCluster()
		srv := proxmoxtest.NewServer(cluster)
		defer srv.Close()
		cfg = proxmoxsafe.Config{
			URL:         srv.URL,
			TokenID:     proxmoxtest.DefaultTokenID,
			TokenSecret: proxmoxtest.DefaultTokenSecret,
			Fingerprint: srv.Fingerprint(),
			Policy:      proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2", "pve3"}},
		}
	}
	cfg.Logger = logger
	client, err := proxmoxsafe.New(cfg)
	if err != nil {
		return err
	}

	// Your server: your name, your options, your middleware.
	server := mcp.NewServer(&mcp.Implementation{Name: "my-ops-server", Version: "0.1.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "server_policy",
		Title:       "Operator policy",
		Description: "Report the operator policy this server enforces for Proxmox: allowed nodes, enabled mutation classes, read-only mode.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, PolicyOutput, error) {
		p := client.Policy()
		out := PolicyOutput{TokenID: client.TokenID(), AllowedNodes: p.AllowedNodes, Classes: []string{}, ReadOnly: p.ReadOnly}
		if out.AllowedNodes == nil {
			out.AllowedNodes = []string{}
		}
		for _, c := range p.Classes {
			out.Classes = append(out.Classes, string(c))
		}
		return nil, out, nil
	})
	// The Proxmox tools, next to yours.
	mcpserver.AddTools(server, client, &mcpserver.Options{Logger: logger})
	// AddTools installs no middleware (the server is yours); these give one
	// log line per call and turn any handler panic into a tool error.
	server.AddReceivingMiddleware(mcpserver.LoggingMiddleware(logger), mcpserver.RecoverMiddleware(logger))

	if !*demo {
		return server.Run(ctx, &mcp.StdioTransport{})
	}
	return selfCheck(ctx, server, stdout)
}

// selfCheck connects an in-memory client, lists the tools and calls two.
func selfCheck(ctx context.Context, server *mcp.Server, stdout io.Writer) error {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "self-check", Version: "0.1.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return err
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "tools:")
	for _, t := range tools.Tools {
		fmt.Fprintf(stdout, "  %s (readOnly=%t)\n", t.Name, t.Annotations != nil && t.Annotations.ReadOnlyHint)
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"server_policy", map[string]any{}},
		{"list_guests", map[string]any{"tag": "prod", "limit": 3}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s returned an error: %v", c.name, res.Content)
		}
		b, _ := json.MarshalIndent(res.StructuredContent, "  ", "  ")
		fmt.Fprintf(stdout, "%s:\n  %s\n", c.name, b)
	}
	return nil
}
