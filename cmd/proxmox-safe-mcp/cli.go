package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

// listTools prints one line per tool the configuration exposes: name,
// class ("read" or the mutation class) and the first sentence of the
// description.
func listTools(a *app, stdout io.Writer) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLASS\tDESCRIPTION")
	for _, t := range mcpserver.Tools(a.client, a.opts) {
		class := string(t.Class)
		if class == "" {
			class = "read"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, class, firstSentence(t.Description))
	}
	tw.Flush()
	return exitOK
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// callTool runs one tool through an in-memory MCP session with the same
// server "serve" builds, so the CLI sees exactly what an MCP client sees.
//
// Output: the structured result as indented JSON on stdout; the text
// content on stderr when it is an error or a human summary (not a mere JSON
// copy of the structured result); a result with only text goes to stdout.
// Exit 0 on success, 1 when the result has isError, 2 on usage errors
// (bad JSON, unknown tool).
func callTool(ctx context.Context, a *app, cfg *config, stdout, stderr io.Writer) int {
	raw := json.RawMessage(strings.TrimSpace(cfg.ToolArgs))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call %s: the arguments must be one JSON object, e.g. '{\"node\":\"pve1\"}'\n", cfg.Tool)
		return exitUsage
	}

	srv := mcpserver.New(a.client, a.opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call: %v\n", err)
		return exitToolError
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "proxmox-safe-mcp-cli", Version: versionString()}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call: %v\n", err)
		return exitToolError
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: cfg.Tool, Arguments: raw})
	if err != nil {
		if strings.Contains(err.Error(), "unknown tool") {
			fmt.Fprintf(stderr, "proxmox-safe-mcp: call: unknown tool %q in this configuration (run \"proxmox-safe-mcp tools\" to list them)\n", cfg.Tool)
			return exitUsage
		}
		fmt.Fprintf(stderr, "proxmox-safe-mcp: call %s: %v\n", cfg.Tool, err)
		return exitToolError
	}
	return printResult(res, stdout, stderr)
}

// printResult prints a tool result for a shell: JSON on stdout (the
// structured result, or for an error the {"error":…} object), the words for
// people on stderr. Each text content ends with the same JSON on one line
// (mcpserver content.go); that line is not printed twice.
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
		case tail != "" && structured != nil && sameJSON(structured, []byte(tail)):
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

// sameJSON reports whether text is only a JSON rendering of structured.
func sameJSON(structured, text []byte) bool {
	var a, b any
	if json.Unmarshal(structured, &a) != nil || json.Unmarshal(text, &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
