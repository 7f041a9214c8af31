package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// What every conversation pays for before its first call: the tool
// definitions a host puts in the model's context, and the tools/list
// answer on the wire. Measured here, per profile, as a client sees them.
//
//	go test ./mcpserver -run TestDefinitionSizes -v
//
// prints the table (docs/TOOLS.md, "What the model is given").

// sizeProfile is a binary profile as the sizes are measured: its classes
// on two allowed nodes, with the binary's default approvals.
type sizeProfile struct {
	name    string
	profile proxmoxsafe.Profile
	// gatewayWrite adds the gateway-write class (--gateway-write).
	gatewayWrite bool
	// maxDefinitions and maxWire are the limits TestDefinitionSizes holds
	// the profile to (0: none), in bytes.
	maxDefinitions, maxWire int
}

// The limits: the targets of the issue that set them (8 KB, 8.5 KB,
// 20 KB for admin with --gateway-write); admin's tools/list target,
// 60 KB, holds the tools it had when the target was set, and its whole
// answer is held to what it reached with the tools added since, output
// schemas complete (docs/TOOLS.md, "What the model is given"). A new tool, or more words, must fit within
// them: say shared things once (the instructions, declaration.go), and a
// parameter's description only where its name does not say it
// (docs/TOOLS.md, "What the model is given").
const (
	maxSafeDefinitions      = 8000
	maxResponderDefinitions = 8500
	maxAdminDefinitions     = 20000
	maxAdminWire            = 81000 // target 60000
	// maxTargetToolsWire holds the tools admin listed when the 60 KB
	// target was set (targetTools) to it: the eleven added since
	// (backups, the guest agent, metrics, node health) take ~21 KB more.
	maxTargetToolsWire = 60000
	// maxInstructions bounds what moved into the instructions, which
	// every conversation pays for too.
	maxInstructions = 2000
)

// targetTools are the 27 tools admin listed when its tools/list target
// of 60 KB was set.
var targetTools = []string{"api_get", "backup_list", "ceph_status", "cluster_status", "container_create", "disk_resize", "guest_clone", "guest_config", "guest_config_set", "guest_destroy", "guest_migrate", "guest_power", "guest_resume", "guest_status", "guest_suspend", "ha_status", "list_guests", "node_status", "permissions_check", "snapshot_delete", "snapshot_guest", "snapshot_list", "snapshot_rollback", "storage_list", "task_list", "task_status", "vm_create"}

func sizeProfiles() []sizeProfile {
	return []sizeProfile{
		{name: "readonly", profile: proxmoxsafe.ProfileReadOnly},
		{name: "safe", profile: proxmoxsafe.ProfileSafe, maxDefinitions: maxSafeDefinitions},
		{name: "responder", profile: proxmoxsafe.ProfileResponder, maxDefinitions: maxResponderDefinitions},
		{name: "admin", profile: proxmoxsafe.ProfileAdmin, maxWire: maxAdminWire},
		{name: "admin+gateway-write", profile: proxmoxsafe.ProfileAdmin, gatewayWrite: true, maxDefinitions: maxAdminDefinitions},
	}
}

func (p sizeProfile) policy(tb testing.TB) proxmoxsafe.Policy {
	tb.Helper()
	classes, err := p.profile.Classes()
	if err != nil {
		tb.Fatal(err)
	}
	if p.gatewayWrite {
		classes = append(classes, proxmoxsafe.ClassGatewayWrite)
	}
	// The descriptions follow each class's default levels, not the policy's;
	// the phrase everywhere only spares the fixture the elicit and grant
	// approvers.
	approvals := map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
	for _, c := range classes {
		approvals[c] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}
	}
	return proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: classes, Approvals: approvals}
}

// definitionSizes are one profile's sizes, in bytes.
type definitionSizes struct {
	// tools counts the tools listed.
	tools int
	// definitions sums, over the listed tools, the compact JSON of
	// {"name","description","inputSchema"}: what a host hands the model.
	definitions int
	// perTool is each tool's share of definitions.
	perTool map[string]int
	// instructions is the initialize answer's instructions text.
	instructions int
	// wire is the whole tools/list answer as the server sent it (the
	// JSON-RPC message, output schemas and annotations included).
	wire int
	// targetWire is wire without the tools not in targetTools.
	targetWire int
}

// measureDefinitions connects a client to a server for p's policy and
// measures what it is given. The server's side of the connection is
// logged, so wire is the exact message go-sdk wrote.
func measureDefinitions(tb testing.TB, p sizeProfile) definitionSizes {
	tb.Helper()
	pol := p.policy(tb)
	f := newFixture(tb, tb.Context(), "2025-11-25", fixtureConfig{policy: &pol})
	var log syncBuffer
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.server.Connect(tb.Context(), &mcp.LoggingTransport{Transport: st, Writer: &log}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "size-client", Version: "v0.0.1"}, nil).
		Connect(tb.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := cs.ListTools(tb.Context(), nil)
	instructions := cs.InitializeResult().Instructions
	// The transport logs a message after writing it: the log is complete
	// once the session is closed.
	cs.Close()
	ss.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	s := definitionSizes{tools: len(res.Tools), perTool: map[string]int{}, instructions: len(instructions)}
	for _, tool := range res.Tools {
		n := len(modelJSON(tb, struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema any    `json:"inputSchema"`
		}{tool.Name, tool.Description, tool.InputSchema}))
		s.perTool[tool.Name] = n
		s.definitions += n
	}
	for line := range strings.Lines(log.String()) {
		msg, ok := strings.CutPrefix(line, "write: ")
		if ok && strings.Contains(msg, `"tools":[`) {
			msg = strings.TrimSuffix(msg, "\n")
			s.wire, s.targetWire = len(msg), wireWithout(tb, msg, targetTools)
		}
	}
	if s.wire == 0 {
		tb.Fatal("no tools/list answer in the server's log")
	}
	return s
}

// wireWithout is the length of a tools/list message without the tools
// whose names are not in keep: each tool's bytes as sent, less the comma
// that separated it.
func wireWithout(tb testing.TB, msg string, keep []string) int {
	tb.Helper()
	var m struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		tb.Fatal(err)
	}
	n := len(msg)
	for _, raw := range m.Result.Tools {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			tb.Fatal(err)
		}
		if !slices.Contains(keep, tool.Name) {
			n -= len(raw) + 1
		}
	}
	return n
}

// modelJSON marshals v compactly without HTML escaping (a host shows the
// model "<action>", not "\u003caction\u003e").
func modelJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestDefinitionSizes measures every profile, prints the table (-v) with
// the largest tools of the widest profile, and fails above a profile's
// limits. A new tool or a longer description must fit: say shared things
// once (the instructions, declaration.go), and a parameter's description
// only where its name does not say it.
func TestDefinitionSizes(t *testing.T) {
	var rows []string
	var widest definitionSizes
	for _, p := range sizeProfiles() {
		s := measureDefinitions(t, p)
		if p.maxDefinitions > 0 && s.definitions > p.maxDefinitions {
			t.Errorf("%s: tool definitions take %d bytes, more than the limit of %d", p.name, s.definitions, p.maxDefinitions)
		}
		if p.maxWire > 0 && s.wire > p.maxWire {
			t.Errorf("%s: tools/list takes %d bytes on the wire, more than the limit of %d", p.name, s.wire, p.maxWire)
		}
		if p.maxWire > 0 && s.targetWire > maxTargetToolsWire {
			t.Errorf("%s: the tools listed when the target was set take %d bytes on the wire, more than the limit of %d", p.name, s.targetWire, maxTargetToolsWire)
		}
		if s.instructions > maxInstructions {
			t.Errorf("%s: the instructions take %d bytes, more than the limit of %d", p.name, s.instructions, maxInstructions)
		}
		rows = append(rows, fmt.Sprintf("%-20s %5d %12d %12d %12d %14d", p.name, s.tools, s.definitions, s.instructions, s.wire, s.targetWire))
		if s.tools > widest.tools {
			widest = s
		}
	}
	t.Logf("\n%-20s %5s %12s %12s %12s %14s\n%s", "profile", "tools", "definitions", "instructions", "tools/list", "of targetTools", strings.Join(rows, "\n"))
	names := make([]string, 0, len(widest.perTool))
	for name := range widest.perTool {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return widest.perTool[names[i]] > widest.perTool[names[j]] })
	var top []string
	for _, name := range names[:min(8, len(names))] {
		top = append(top, fmt.Sprintf("%-20s %6d", name, widest.perTool[name]))
	}
	t.Logf("largest definitions:\n%s", strings.Join(top, "\n"))
}
