package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// runIn runs the command in-process with a map environment.
func runIn(t *testing.T, m map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	code := run(t.Context(), args, lookup, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// TestToolsCommand: JSON output, one tool's parameters, summaries not cut
// at "e.g.", and a hidden tool named as hidden, not "unknown".
func TestToolsCommand(t *testing.T) {
	t.Parallel()
	none := map[string]string{}
	out, errOut, code := runIn(t, none, "--demo", "tools", "--json")
	var list []struct {
		Name        string         `json:"name"`
		Class       string         `json:"class"`
		Summary     string         `json:"summary"`
		InputSchema map[string]any `json:"input_schema"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("tools --json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
		if l.InputSchema["type"] != "object" || l.Summary == "" {
			t.Errorf("%s: %+v", l.Name, l)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allToolNames()) {
		t.Errorf("tools --json names %v", names)
	}

	out, _, code = runIn(t, none, "--demo", "tools")
	if code != 0 || !regexp.MustCompile(`task_list\s+read\s+.*paged by start \(pass next_start back\)`).MatchString(out) {
		t.Errorf("task_list row cut off:\n%s", out)
	}

	out, _, code = runIn(t, none, "--demo", "tools", "guest_power")
	for _, w := range []string{"guest_power (power)", "Parameters:", "action (string, required): one of start, shutdown, reboot, stop", "timeout_seconds (integer, optional)", "Approval phrase: APPROVE <action> <node>/<type>/<vmid>"} {
		if !strings.Contains(out, w) {
			t.Errorf("tools guest_power lacks %q:\n%s", w, out)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	out, _, code = runIn(t, none, "--demo", "--json", "tools", "node_status")
	var one struct {
		Name string `json:"name"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Name != "node_status" {
		t.Errorf("tools --json node_status: %d %q", code, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--read-only", "call", "guest_power", "{}"}, `tool "guest_power" is hidden in this configuration: it is a mutation tool and this server is read-only`},
		{[]string{"--demo", "--profile", "readonly", "tools", "snapshot_guest"}, `its mutation class snapshot is not enabled by profile "readonly"`},
		{[]string{"--demo", "call", "no_such_tool"}, `unknown tool "no_such_tool"`},
	} {
		_, errOut, code := runIn(t, none, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing was run") {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestCallWait: progress on stderr (plain lines when it is not a terminal)
// and distinct exit codes for a failed task and a wait that timed out.
func TestCallWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(*proxmoxtest.Server)
		args  string
		code  int
		want  string
	}{
		{"completed", nil, `"wait":true`, exitOK, "completed OK"},
		{"failed", func(s *proxmoxtest.Server) { s.FailNextTask("command 'qmshutdown' failed: got timeout") }, `"wait":true`, exitWaitFailed, "FAILED"},
		{"timeout", func(s *proxmoxtest.Server) { s.TaskPolls = 1_000_000 }, `"wait":true,"timeout_seconds":1`, exitWaitTimeout, "still running after 1 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := proxmoxtest.NewUnstartedServer(nil)
			if tc.setup != nil {
				tc.setup(srv)
			}
			srv.StartTLS()
			defer srv.Close()
			m := map[string]string{
				"PVE_URL":                srv.URL,
				"PVE_API_TOKEN_ID":       proxmoxtest.DefaultTokenID,
				"PVE_API_TOKEN_SECRET":   proxmoxtest.DefaultTokenSecret,
				"PVE_TLS_FINGERPRINT":    srv.Fingerprint(),
				"PVE_ALLOWED_NODES":      "pve1",
				"PROXMOX_SAFE_AUDIT_LOG": filepath.Join(t.TempDir(), "audit.jsonl"),
			}
			out, errOut, code := runIn(t, m, "call", "guest_power",
				`{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100",`+tc.args+`}`)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, "guest_power: waiting for the task to finish") || strings.Contains(errOut, "\r") {
				t.Errorf("no plain progress lines on a non-terminal stderr: %q", errOut)
			}
			if !strings.Contains(out, `"upid": "UPID:pve1:`) {
				t.Errorf("stdout lacks the receipt: %s", out)
			}
		})
	}
}

// TestProgressLive: on a terminal the status line is rewritten in place
// and blanked before the result, so the terminal shows one line at a time.
func TestProgressLive(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := &progressPrinter{w: &b, live: true}
	p.start("guest_power")
	p.update("task qmshutdown still running (poll 1)")
	p.update("task qmshutdown still running (poll 1)") // repeated: not printed again
	p.update("completed")
	p.done()
	out := b.String()
	if strings.Contains(out, "\n") || strings.Count(out, "still running") != 1 || !strings.HasSuffix(out, "\r") ||
		!strings.Contains(out, "\rproxmox-safe-mcp: guest_power: completed") {
		t.Errorf("live output %q", out)
	}
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}

// TestCommandHelp: tools, call and doctor --help print their own usage on
// stdout and exit 0 (they printed the whole --help); the top-level usage
// and the unknown-command message name approve, deny and grants.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	none := map[string]string{}
	for _, args := range [][]string{{"tools", "--help"}, {"--demo", "call", "--help"}, {"call", "guest_power", "-h"}, {"doctor", "--help"}} {
		out, errOut, code := runIn(t, none, args...)
		cmd := args[0]
		if cmd == "--demo" {
			cmd = args[1]
		}
		if code != 0 || !strings.HasPrefix(out, "Usage: proxmox-safe-mcp [flags] "+cmd) || strings.Contains(out, "--allowed-nodes") || errOut != "" {
			t.Errorf("%q: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	out, _, code := runIn(t, none, "--help")
	for _, want := range []string{"approve|deny CODE", "grants list", "COMMAND --help"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	_, errOut, code := runIn(t, none, "bogus")
	if code != exitUsage || !strings.Contains(errOut, "approve, deny, grants") {
		t.Errorf("unknown command: exit %d %s", code, errOut)
	}
}

// TestMissingToolSaysTheNextStep: a hidden tool names the setting that
// offers it (the profiles whose classes hold it, or --gateway-write); a
// misspelt one the nearest tool name; a name far from every tool neither.
func TestMissingToolSaysTheNextStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		want, nope string
	}{
		{[]string{"--demo", "tools", "guest_destroy"}, `not enabled by profile "safe" (PROXMOX_SAFE_PROFILE, --profile); --profile admin enables it`, ""},
		{[]string{"--demo", "--profile", "readonly", "call", "guest_power"}, "--profile safe or --profile admin enables it", ""},
		{[]string{"--demo", "--profile", "admin", "tools", "api_request"}, "--gateway-write (PROXMOX_SAFE_GATEWAY_WRITE=true) enables it", ""},
		{[]string{"--demo", "call", "list_guest"}, `unknown tool "list_guest" (did you mean list_guests? run "proxmox-safe-mcp tools"`, ""},
		{[]string{"--demo", "tools", "Snapshot_Gest"}, "did you mean snapshot_guest?", ""},
		{[]string{"--demo", "call", "no_such_tool"}, `unknown tool "no_such_tool"`, "did you mean"},
	} {
		_, errOut, code := runIn(t, map[string]string{}, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || (tc.nope != "" && strings.Contains(errOut, tc.nope)) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestToolExampleRuns: every tool's `tools TOOL` ends with a call whose
// arguments are valid for its schema and accepted by the tool (the demo
// runs it: a result, or a refusal for approval or the demo's state, never
// invalid input); it used to end with a '{…}' placeholder.
func TestToolExampleRuns(t *testing.T) {
	t.Parallel()
	admin := []string{"--demo", "--profile", "admin", "--gateway-write"}
	for _, ti := range mcpserver.Tools(nil, nil) {
		if ti.Class == proxmoxsafe.ClassResponder {
			continue // the responder profile's; the same shared parameters
		}
		out, errOut, code := runIn(t, map[string]string{}, append(slices.Clone(admin), "tools", ti.Name)...)
		last := out[strings.LastIndexByte(strings.TrimRight(out, "\n"), '\n')+1:]
		prefix := "  proxmox-safe-mcp call " + ti.Name + " '"
		if code != 0 || !strings.HasPrefix(last, prefix) || strings.Contains(last, "…") {
			t.Errorf("%s: exit %d, last line %q\n%s", ti.Name, code, last, errOut)
			continue
		}
		args := strings.TrimSuffix(strings.TrimPrefix(strings.TrimRight(last, "\n"), prefix), "'")
		resolved, err := ti.InputSchema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(args), &v); err != nil || resolved.Validate(v) != nil {
			t.Errorf("%s: example %s does not fit the schema: %v %v", ti.Name, args, err, resolved.Validate(v))
			continue
		}
		res, errOut, code := runIn(t, map[string]string{}, append(slices.Clone(admin), "--audit-log", filepath.Join(t.TempDir(), "a.jsonl"), "call", ti.Name, args)...)
		if code == exitUsage || strings.Contains(res, `"invalid_input"`) {
			t.Errorf("%s %s: exit %d\n%s\n%s", ti.Name, args, code, res, errOut)
		}
	}
}

// TestCompletionCommand: completion needs no configuration, lists every
// tool of this version after tools and call, and refuses an unknown shell
// with exit 2.
func TestCompletionCommand(t *testing.T) {
	t.Parallel()
	out, stderr, code := runWith(t, map[string]string{}, "completion", "bash")
	if code != exitOK || !strings.Contains(out, "complete -F _proxmox_safe_mcp proxmox-safe-mcp") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	for _, tool := range mcpserver.Tools(nil, nil) {
		if !regexp.MustCompile(`[" ]` + tool.Name + `[" ]`).MatchString(out) {
			t.Errorf("bash script lacks tool %s", tool.Name)
		}
	}
	if _, stderr, code := runWith(t, map[string]string{}, "completion", "tcsh"); code != exitUsage || !strings.Contains(stderr, `unknown shell "tcsh"`) {
		t.Errorf("tcsh: exit %d %s", code, stderr)
	}
	if out, _, code := runWith(t, map[string]string{}, "completion", "--help"); code != exitOK || !strings.Contains(out, "Usage: proxmox-safe-mcp completion bash|zsh|fish") {
		t.Errorf("--help: exit %d %s", code, out)
	}
	if _, _, code := runWith(t, map[string]string{}, "completion"); code != exitUsage {
		t.Errorf("no shell: exit %d", code)
	}
}
