package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// listTools prints the tools the configuration exposes: one line per tool
// (name, class "read" or the mutation class, first sentence), or with
// cfg.Tool one tool's parameters; with cfg.JSON the same as JSON.
func listTools(a *app, cfg *settings.Config, stdout, stderr io.Writer) int {
	tools := mcpserver.Tools(a.client, a.opts)
	if cfg.Tool != "" {
		i := slices.IndexFunc(tools, func(t mcpserver.ToolInfo) bool { return t.Name == cfg.Tool })
		if i < 0 {
			fmt.Fprintf(stderr, "proxmox-safe-mcp: tools: %s\n", missingTool(a, cfg, cfg.Tool))
			return exitUsage
		}
		if cfg.JSON {
			writeJSON(stdout, toolJSON(tools[i]))
			return exitOK
		}
		printTool(stdout, tools[i])
		return exitOK
	}
	if cfg.JSON {
		out := make([]toolListing, len(tools))
		for i, t := range tools {
			out[i] = toolJSON(t)
		}
		writeJSON(stdout, out)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLASS\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, className(t), t.Summary())
	}
	tw.Flush()
	return exitOK
}

func className(t mcpserver.ToolInfo) string {
	if t.Class == "" {
		return "read"
	}
	return string(t.Class)
}

// toolListing is one tool in `tools --json`: what a script needs to call
// it.
type toolListing struct {
	Name           string              `json:"name"`
	Title          string              `json:"title"`
	Class          string              `json:"class"`
	Summary        string              `json:"summary"`
	Description    string              `json:"description"`
	ApprovalFormat string              `json:"approval_format,omitempty"`
	Privileges     []string            `json:"privileges"`
	Annotations    mcp.ToolAnnotations `json:"annotations"`
	InputSchema    *jsonschema.Schema  `json:"input_schema"`
	OutputSchema   *jsonschema.Schema  `json:"output_schema"`
}

func toolJSON(t mcpserver.ToolInfo) toolListing {
	return toolListing{
		Name: t.Name, Title: t.Title, Class: className(t), Summary: t.Summary(), Description: t.Description,
		ApprovalFormat: t.ApprovalFormat, Privileges: t.Privileges, Annotations: t.Annotations,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
	}
}

// printTool shows one tool for people: description, parameters with their
// type, whether required, constraints, then approval and privileges.
func printTool(w io.Writer, t mcpserver.ToolInfo) {
	fmt.Fprintf(w, "%s (%s) — %s\n\n%s\n", t.Name, className(t), t.Title, t.Description)
	fmt.Fprintln(w, "\nParameters:")
	props := t.InputSchema.PropertyOrder
	if len(props) == 0 {
		props = slices.Sorted(maps.Keys(t.InputSchema.Properties))
	}
	if len(props) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, name := range props {
		p := t.InputSchema.Properties[name]
		if p == nil {
			continue
		}
		req := "optional"
		if slices.Contains(t.InputSchema.Required, name) {
			req = "required"
		}
		fmt.Fprintf(w, "  %s (%s, %s)%s\n", name, schemaType(p), req, schemaLimits(p))
		if p.Description != "" {
			fmt.Fprintf(w, "      %s\n", p.Description)
		}
	}
	if t.ApprovalFormat != "" {
		fmt.Fprintf(w, "\nApproval phrase: %s\n", t.ApprovalFormat)
	}
	if len(t.Privileges) > 0 {
		fmt.Fprintf(w, "Proxmox privileges: %s\n", strings.Join(t.Privileges, "; "))
	}
	fmt.Fprintf(w, "\nExample (the required parameters; tools --json %s gives the JSON schemas):\n  proxmox-safe-mcp call %s '%s'\n", t.Name, t.Name, exampleArgs(t.Name, t.InputSchema))
}

// exampleValues are example values of the parameters tools share, valid
// against the demo cluster (pve1 and its VM 100 exist there).
var exampleValues = map[string]any{
	"node": "pve1", "target": "pve2", "vmid": 100, "snapname": "before-upgrade",
	"storage": "local-lvm", "disk_storage": "local-lvm", "rootfs_storage": "local-lvm",
	"bridge": "vmbr0", "hostname": "demo1", "name": "demo1", "ip": "dhcp",
	"ostemplate": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
	"upid":       "UPID:pve1:00001234:00005678:65A0B1C2:qmstart:100:root@pam:",
	"path":       "/cluster/resources", "disk": "scsi0", "size": "+1G",
}

// exampleOptional are the optional parameters a tool's example needs
// anyway: a rule the schema cannot state (guest_config_set needs set or
// delete).
var exampleOptional = map[string]map[string]any{
	mcpserver.ToolGuestConfigSet: {"set": map[string]string{"cores": "2"}},
}

// exampleArgs builds a JSON object of the schema's required parameters
// (and exampleOptional's) with a value each: the first of an enum, a known example, the default,
// the minimum of a number, false; in the schema's order. The command line
// is runnable as shown (a mutation then gives its approval phrase).
func exampleArgs(tool string, s *jsonschema.Schema) string {
	if s == nil {
		return "{}"
	}
	order := s.PropertyOrder
	if len(order) == 0 {
		order = slices.Sorted(maps.Keys(s.Properties))
	}
	var b strings.Builder
	b.WriteByte('{')
	for _, name := range order {
		p := s.Properties[name]
		extra, optional := exampleOptional[tool][name]
		if p == nil || (!optional && !slices.Contains(s.Required, name)) {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		value := extra
		if !optional {
			value = exampleValue(name, p)
		}
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func exampleValue(name string, p *jsonschema.Schema) any {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0]
	case len(p.Examples) > 0:
		return p.Examples[0]
	case len(p.Default) > 0:
		return p.Default
	}
	if v, ok := exampleValues[name]; ok {
		return v
	}
	switch schemaType(p) {
	case "integer", "number":
		if p.Minimum != nil {
			return *p.Minimum
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "example"
}

func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	return strings.Join(s.Types, "|")
}

// schemaLimits renders enum, bounds, pattern and default in a few words.
func schemaLimits(s *jsonschema.Schema) string {
	var parts []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	if s.Minimum != nil {
		parts = append(parts, "min "+strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		parts = append(parts, "max "+strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	if s.MaxLength != nil {
		parts = append(parts, "at most "+strconv.Itoa(*s.MaxLength)+" characters")
	}
	if s.Pattern != "" {
		parts = append(parts, "pattern "+s.Pattern)
	}
	if len(s.Default) > 0 {
		parts = append(parts, "default "+string(s.Default))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
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
	if near := nearestTool(name, all); near != "" {
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

// nearestTool is the tool name closest to name (a typo, a missing or extra
// letter, another server's name), or "" when none is close.
func nearestTool(name string, tools []mcpserver.ToolInfo) string {
	best, bestDist := "", len(name)/3+1
	if bestDist < 2 {
		bestDist = 2
	}
	bestDist++ // a distance below this counts as close
	for _, t := range tools {
		if d := editDistance(strings.ToLower(name), t.Name); d < bestDist {
			best, bestDist = t.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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

	srv := mcpserver.New(a.client, a.opts)
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
