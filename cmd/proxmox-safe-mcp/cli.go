package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/toolcard"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// listTools prints the tools the configuration exposes: one line per tool
// (name, class "read" or the mutation class, first sentence), or with
// cfg.Tool one tool's parameters; with cfg.JSON the same as JSON.
func listTools(a *app, cfg *settings.Config, stdout, stderr io.Writer) int {
	tools := mcpserver.FleetTools(a.clients(), a.opts)
	if cfg.Tool != "" {
		i := slices.IndexFunc(tools, func(t mcpserver.ToolInfo) bool { return t.Name == cfg.Tool })
		if i < 0 {
			fmt.Fprintf(stderr, "proxmox-safe-mcp: tools: %s\n", missingTool(a, cfg, cfg.Tool))
			return exitUsage
		}
		if cfg.JSON {
			writeJSON(stdout, toolcard.ListingOf(tools[i]))
			return exitOK
		}
		toolcard.Print(stdout, tools[i])
		return exitOK
	}
	if cfg.JSON {
		out := make([]toolcard.Listing, len(tools))
		for i, t := range tools {
			out[i] = toolcard.ListingOf(t)
		}
		writeJSON(stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLASS\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, toolcard.ClassName(t), t.Summary())
	}
	tw.Flush()
	if line := selectionLine(a, cfg); line != "" {
		fmt.Fprintln(stdout, "\n"+line)
	}
	return exitOK
}

// selectionLine says what the tool selection hides of what the policy
// offers, "" without a selection.
func selectionLine(a *app, cfg *settings.Config) string {
	if cfg.Selection.IsZero() {
		return ""
	}
	all := *a.opts
	all.Selection = mcpserver.Selection{}
	var hidden []string
	for _, t := range mcpserver.Tools(a.client, &all) {
		if !cfg.Selection.Selects(t.Name) {
			hidden = append(hidden, t.Name)
		}
	}
	if len(hidden) == 0 {
		return fmt.Sprintf("Tool selection %s hides none of the tools the policy offers.", cfg.Selection)
	}
	return fmt.Sprintf("Tool selection %s hides %d of the tools the policy offers: %s.", cfg.Selection, len(hidden), strings.Join(hidden, ", "))
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// missingTool explains why a tool name is not offered: it does not exist
// (with the nearest tool name, when one is close), or this configuration
// hides it (read-only, class not enabled, no node allowed), and the
// setting that would offer it.
func missingTool(a *app, cfg *settings.Config, name string) string {
	all := mcpserver.Tools(nil, nil)
	for _, t := range all {
		if t.Name != name {
			continue
		}
		why := "it is not offered by this configuration"
		switch {
		case !cfg.Selection.Selects(name):
			why = fmt.Sprintf("the tool selection hides it (%s: --toolsets, --tools, --exclude-toolsets, --exclude-tools); it is in toolset %s", cfg.Selection, mcpserver.ToolsetOf(name))
		case cfg.ReadOnly:
			why = "it is a mutation tool and this server is read-only (--read-only, PROXMOX_SAFE_READ_ONLY)"
		case !a.client.Enabled(t.Class):
			why = fmt.Sprintf("its mutation class %s is not enabled by profile %q (PROXMOX_SAFE_PROFILE, --profile); %s", t.Class, cfg.Profile, enablingSetting(t.Class))
		case len(a.client.Policy().AllowedNodes) == 0:
			why = "PVE_ALLOWED_NODES (--allowed-nodes) is empty, so it could not target any node: name the nodes it may target, e.g. --allowed-nodes pve1"
		}
		return fmt.Sprintf("tool %q is hidden in this configuration: %s; nothing was run", name, why)
	}
	hint := ""
	if near := toolcard.Nearest(name, all); near != "" {
		hint = fmt.Sprintf("did you mean %s? ", near)
	}
	return fmt.Sprintf("unknown tool %q (%srun \"proxmox-safe-mcp tools\" to list the tools this configuration offers); nothing was run", name, hint)
}

// enablingSetting says what enables class: the profiles whose classes hold
// it (--profile admin), or for gateway-write, which no profile enables, its
// own flag.
func enablingSetting(class proxmoxsafe.Class) string {
	if class == proxmoxsafe.ClassGatewayWrite {
		return "--gateway-write (PROXMOX_SAFE_GATEWAY_WRITE=true) enables it"
	}
	var with []string
	for _, p := range proxmoxsafe.Profiles() {
		if classes, _ := p.Classes(); slices.Contains(classes, class) {
			with = append(with, "--profile "+string(p))
		}
	}
	if len(with) == 0 {
		return "no profile enables it"
	}
	return strings.Join(with, " or ") + " enables it"
}

// callTool runs one tool through an in-memory MCP session with the same
// server "serve" builds, so the CLI sees exactly what an MCP client sees.
//
// Output: the structured result (or an error's {"error":…} object) as
// indented JSON on stdout; the words for people on stderr; a result with
// only text goes to stdout. With "wait": true, progress goes to stderr
// (rewritten in place on a terminal, one line per update otherwise).
// Exit codes: see the constants in main.go.
func callTool(ctx context.Context, a *app, cfg *settings.Config, stdout, stderr io.Writer) int {
	raw := json.RawMessage(strings.TrimSpace(cfg.ToolArgs))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call %s: the arguments must be one JSON object, e.g. '{\"node\":\"pve1\"}'\n", cfg.Tool)
		return exitUsage
	}

	srv := a.server()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call: %v\n", err)
		return exitToolError
	}
	defer ss.Wait()
	prog := newProgressPrinter(stderr)
	copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		prog.update(r.Params.Message)
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "proxmox-safe-mcp-cli", Version: versionString()}, copts).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call: %v\n", err)
		return exitToolError
	}
	defer cs.Close()

	params := &mcp.CallToolParams{Name: cfg.Tool, Arguments: raw}
	if w, ok := obj["wait"]; ok && string(w) == "true" {
		params.SetProgressToken("cli")
		prog.start(cfg.Tool)
	}
	res, err := cs.CallTool(ctx, params)
	prog.done()
	if err != nil {
		if strings.Contains(err.Error(), "unknown tool") {
			fmt.Fprintf(stderr, "proxmox-safe-mcp: call: %s\n", missingTool(a, cfg, cfg.Tool))
			return exitUsage
		}
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call %s: %v\n", cfg.Tool, err)
		return exitToolError
	}
	code := printResult(res, stdout, stderr)
	return waitExitCode(res, code)
}

// waitExitCode distinguishes how a wait ended, so scripts need not parse
// the result: a timeout (or a wait cut short) and a failed task each get
// their own code.
func waitExitCode(res *mcp.CallToolResult, code int) int {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return code
	}
	var r struct {
		Outcome *struct {
			Status string `json:"status"`
		} `json:"outcome"`
	}
	if json.Unmarshal(b, &r) != nil || r.Outcome == nil {
		return code
	}
	switch r.Outcome.Status {
	case "failed":
		return exitWaitFailed
	case "timeout", "submitted":
		return exitWaitTimeout
	}
	return code
}

// printResult prints a tool result for a shell: JSON on stdout (the
// structured result, or for an error the {"error":…} object), the words for
// people on stderr. A text content with a structured result is the words,
// an empty line and the same data in a compact text form (mcpserver
// content.go); the data is not printed twice.
func printResult(res *mcp.CallToolResult, stdout, stderr io.Writer) int {
	var structured []byte
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			structured = b
			writeIndented(stdout, b)
		}
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		words, tail := splitJSONTail(tc.Text)
		switch {
		case structured != nil:
			words, _, _ = strings.Cut(tc.Text, "\n\n")
		case tail != "" && res.IsError && structured == nil:
			writeIndented(stdout, []byte(tail))
		default:
			words = strings.TrimRight(tc.Text, "\n")
		}
		if words == "" {
			continue
		}
		if res.IsError || structured != nil {
			fmt.Fprintln(stderr, words)
		} else {
			fmt.Fprintln(stdout, words)
		}
	}
	if res.IsError {
		return exitToolError
	}
	return exitOK
}

// splitJSONTail splits a text content into its words and its last line when
// that line is a JSON object; tail is "" otherwise.
func splitJSONTail(text string) (words, tail string) {
	text = strings.TrimRight(text, "\n")
	i := strings.LastIndexByte(text, '\n')
	last := text[i+1:]
	if !strings.HasPrefix(last, "{") || !json.Valid([]byte(last)) {
		return text, ""
	}
	if i < 0 {
		return "", last
	}
	return text[:i], last
}

func writeIndented(w io.Writer, b []byte) {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		out.Reset()
		out.Write(b)
	}
	out.WriteByte('\n')
	w.Write(out.Bytes())
}
