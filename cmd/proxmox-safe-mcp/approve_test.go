package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

var grantCodeRe = regexp.MustCompile(`grant ([0-9A-Z]{4}-[0-9A-Z]{4})`)

// grantCLI runs the built binary's approve/deny/grants with stdin.
func grantCLI(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func askedCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	m := grantCodeRe.FindStringSubmatch(textOf(res))
	// The demo's own grant directory is named as --demo approve.
	if !res.IsError || m == nil || !regexp.MustCompile(`proxmox-safe-mcp (--demo )?approve `+m[1]).MatchString(textOf(res)) || !strings.Contains(textOf(res), "no action was taken") {
		t.Fatalf("want a grant refusal with a code, got isError %t: %s", res.IsError, textOf(res))
	}
	return m[1]
}

// TestGrantCLI: against a running stdio server (the built binary, power
// approved only by grants), a refused call gets a code; "deny" makes it
// useless; "approve" shows the plan and needs the code typed again; the
// repeated call then runs once and the audit log names the level, the
// code and the operator; "grants list" shows each state; a restarted
// server does not use the grant again.
func TestGrantCLI(t *testing.T) {
	t.Parallel()
	gdir := t.TempDir()
	env := cleanEnv("PROXMOX_SAFE_GRANT_DIR="+gdir, "USER=tester")
	var stderr syncBuffer
	cmd := exec.Command(binary(t), "--demo", "--approvals", "power=grant")
	cmd.Env = env
	cmd.Stderr = &stderr
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()

	stop100 := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"}
	denied := askedCode(t, call(t, cs, "guest_power", stop100))
	if out, errOut, code := grantCLI(t, env, "", "deny", denied); code != 0 || !strings.Contains(out, "Denied "+denied) {
		t.Fatalf("deny: exit %d\n%s\n%s", code, out, errOut)
	}
	if again := askedCode(t, call(t, cs, "guest_power", stop100)); again == denied {
		t.Fatal("a denied grant was offered again")
	}

	code := askedCode(t, call(t, cs, "guest_power", shutdown100))
	out, _, _ := grantCLI(t, env, "", "grants", "list")
	if !regexp.MustCompile(code+`\s+pending\s.*\shttps://pve-demo\.invalid:8006 as \S+\s+shutdown\s+pve1/qemu/100 \(`).MatchString(out) || !regexp.MustCompile(denied+`\s+denied`).MatchString(out) {
		t.Errorf("grants list:\n%s", out)
	}
	if out, errOut, ec := grantCLI(t, env, "yes\n", "approve", code); ec == 0 || !strings.Contains(errOut, "not confirmed") {
		t.Fatalf("approve without typing the code: exit %d\n%s\n%s", ec, out, errOut)
	}
	if res := call(t, cs, "guest_power", shutdown100); askedCode(t, res) != code {
		t.Fatal("an unconfirmed approve changed the grant")
	}
	out, errOut, ec := grantCLI(t, env, strings.ToLower(code)+"\n", "approve", code)
	if ec != 0 {
		t.Fatalf("approve: exit %d\n%s\n%s", ec, out, errOut)
	}
	for _, want := range []string{"Cluster: https://pve-demo.invalid:8006 as automation@pve!mcp", "Action:  shutdown", "Target:  pve1/qemu/100 (", "State:   running", "Risk:    ", "Effect:  approving will", "Request: POST /nodes/pve1/qemu/100/status/shutdown", "Approved " + code} {
		if !strings.Contains(out, want) {
			t.Errorf("approve output lacks %q:\n%s", want, out)
		}
	}
	res := call(t, cs, "guest_power", shutdown100)
	if res.IsError || !strings.Contains(textOf(res), "UPID:") {
		t.Fatalf("the approved call: %s", textOf(res))
	}
	if res := call(t, cs, "guest_power", shutdown100); !res.IsError {
		t.Fatalf("a repeat after use was not refused: %s", textOf(res))
	}
	out, _, _ = grantCLI(t, env, "", "grants", "list")
	if !regexp.MustCompile(code + `\s+used`).MatchString(out) {
		t.Errorf("grants list after use:\n%s", out)
	}
	if _, errOut, ec := grantCLI(t, env, code+"\n", "approve", code); ec == 0 || !strings.Contains(errOut, "used") {
		t.Errorf("approving a used grant: exit %d %s", ec, errOut)
	}
	if _, errOut, ec := grantCLI(t, env, "", "deny", "NOPE-NOPE"); ec != exitUsage || !strings.Contains(errOut, "not a grant code") {
		t.Errorf("deny of a malformed code: exit %d %s", ec, errOut)
	}

	// A restarted server (fresh demo cluster, same grant directory) does
	// not take the used grant again.
	cmd2 := exec.Command(binary(t), "--demo", "--approvals", "power=grant")
	cmd2.Env = env
	cs2, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd2, TerminateDuration: terminateWait}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again := askedCode(t, call(t, cs2, "guest_power", shutdown100)); again == code {
		t.Error("after a restart the used grant's code was offered again")
	}
	cs2.Close()

	cs.Close()
	m := auditLineRe.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no audit log path in stderr:\n%s", stderr.String())
	}
	audit, err := os.ReadFile(strings.TrimSpace(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	approved := regexp.MustCompile(`"event":"approved".*"approver":"grant","grant":"` + code + `","operator":"[^"]+"`)
	if !approved.Match(audit) {
		t.Errorf("audit log lacks an approved record naming grant %s and its operator:\n%s", code, audit)
	}
	if n := strings.Count(string(audit), `"event":"submitted"`); n != 1 {
		t.Errorf("%d submitted records, want 1", n)
	}
}

// TestGrantCLIExpired: an expired grant is listed as expired and cannot be
// approved from the host, even with the code typed again; nothing about
// it changes.
func TestGrantCLIExpired(t *testing.T) {
	t.Parallel()
	gdir := t.TempDir()
	if err := os.Chmod(gdir, 0o700); err != nil {
		t.Fatal(err)
	}
	const code = "K7QF-3MZD"
	old := time.Now().Add(-20 * time.Minute).UTC()
	g := grant.Grant{Code: code, Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100},
		Effect: "shut down VM 100", State: "running", Binding: "x", Created: old, Expires: old.Add(grant.DefaultTTL), Status: grant.Pending}
	raw, _ := json.Marshal(g)
	file := filepath.Join(gdir, code+".json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv("PROXMOX_SAFE_GRANT_DIR="+gdir, "USER=tester")
	if out, _, _ := grantCLI(t, env, "", "grants", "list"); !regexp.MustCompile(code + `\s+pending \(expired\)`).MatchString(out) {
		t.Errorf("grants list:\n%s", out)
	}
	out, errOut, ec := grantCLI(t, env, code+"\n", "approve", code)
	if ec != exitUsage || !strings.Contains(errOut, "expired") || strings.Contains(out, "Approved") {
		t.Fatalf("approving an expired grant: exit %d\n%s\n%s", ec, out, errOut)
	}
	if after, err := os.ReadFile(file); err != nil || string(after) != string(raw) {
		t.Errorf("the expired grant's file changed: %s %v", after, err)
	}
}

// TestGrantCLIGatewayTarget: a gateway grant for a request that names no
// guest is shown by approve and grants list with its path beside its
// method, as the approval page shows it: its zero guest target read
// "//0", which names nothing.
func TestGrantCLIGatewayTarget(t *testing.T) {
	t.Parallel()
	gdir := t.TempDir()
	if err := os.Chmod(gdir, 0o700); err != nil {
		t.Fatal(err)
	}
	const code = "K7QF-3MZE"
	now := time.Now().UTC()
	g := grant.Grant{Code: code, Action: "DELETE", Params: []string{"path=/cluster/ha/groups/web", "params=none"},
		Plan:   &proxmoxsafe.Plan{Class: proxmoxsafe.ClassGatewayWrite, Method: "DELETE", Path: "/cluster/ha/groups/web", Effect: "send DELETE /cluster/ha/groups/web with no parameters"},
		Effect: "send DELETE /cluster/ha/groups/web with no parameters", State: "n/a", Binding: "x", Created: now, Expires: now.Add(grant.DefaultTTL), Status: grant.Pending}
	raw, _ := json.Marshal(g)
	if err := os.WriteFile(filepath.Join(gdir, code+".json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv("PROXMOX_SAFE_GRANT_DIR="+gdir, "USER=tester")
	out, errOut, _ := grantCLI(t, env, "", "grants", "list")
	if !regexp.MustCompile(code+`\s+pending\s.*\sDELETE\s+/cluster/ha/groups/web\s`).MatchString(out) || strings.Contains(out, "//0") {
		t.Errorf("grants list:\n%s\n%s", out, errOut)
	}
	out, errOut, _ = grantCLI(t, env, "no\n", "approve", code)
	if !strings.Contains(out, "Action:  DELETE\n  Target:  /cluster/ha/groups/web\n") || strings.Contains(out, "//0") {
		t.Errorf("approve:\n%s\n%s", out, errOut)
	}
}

// TestGrantDirAgrees: approve, deny and grants list find the grant
// directory a mutating server with the same settings uses, or the operator
// would approve into a directory the server never reads.
func TestGrantDirAgrees(t *testing.T) {
	t.Parallel()
	for _, kv := range [][]string{
		{"XDG_STATE_HOME", "/var/lib/x"},
		{"HOME", "/home/op"},
		{"HOME", "/home/op", "PROXMOX_SAFE_AUDIT_LOG", "/srv/audit/log.jsonl"},
		{"HOME", "/home/op", "PROXMOX_SAFE_GRANT_DIR", "/srv/grants"},
		{"PROXMOX_SAFE_AUDIT_LOG", "/srv/audit/log.jsonl", "PROXMOX_SAFE_GRANT_DIR", "/srv/grants"},
	} {
		lookup := env(append(with("PROXMOX_SAFE_READ_ONLY", "false"), kv...)...)
		c, err := settings.Parse(nil, lookup)
		if err != nil {
			t.Fatalf("%v: %v", kv, err)
		}
		if server, cli := serverGrantDir(c), grantDirFrom(lookup, false); server == "" || server != cli {
			t.Errorf("%v: the server uses %q, approve uses %q", kv, server, cli)
		}
	}
}

// runStdin runs the command in-process with a map environment and stdin.
func runStdin(t *testing.T, m map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	code := run(t.Context(), args, lookup, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// TestDemoGrantOutlivesTheCall: a one-shot demo call refused at the grant
// level names the command that finds its grant (`--demo approve CODE`),
// the grant is still there after the call exits, approving it lets the
// repeated call run, and plain approve names the directory it searched
// and the demo's command. (Before, the grant lived in a temporary
// directory removed when the call exited, and approve said only "no grant
// has this code".)
func TestDemoGrantOutlivesTheCall(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	m := map[string]string{"XDG_STATE_HOME": state, "USER": "tester"}
	args := `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown"}`
	demoCall := []string{"--demo", "--approvals", "power=grant", "--audit-log", filepath.Join(state, "audit.jsonl"), "call", "guest_power", args}
	out, errOut, code := runStdin(t, m, "", demoCall...)
	match := regexp.MustCompile(`proxmox-safe-mcp --demo approve ([0-9A-Z]{4}-[0-9A-Z]{4})\)`).FindStringSubmatch(errOut)
	if code != exitToolError || match == nil {
		t.Fatalf("refused call: exit %d, want 1 and --demo approve CODE\n%s\n%s", code, out, errOut)
	}
	grantCode := match[1]

	demoDir := filepath.Join(state, "proxmox-safe-mcp", "demo", "grants")
	_, errOut, code = runStdin(t, m, grantCode+"\n", "approve", grantCode)
	if code != exitUsage || !strings.Contains(errOut, "no grant has this code in the grant directory "+filepath.Join(state, "proxmox-safe-mcp", "grants")) ||
		!strings.Contains(errOut, "proxmox-safe-mcp --demo approve CODE") {
		t.Errorf("plain approve of a demo grant: exit %d, want 2 naming the directory and --demo approve\n%s", code, errOut)
	}
	out, errOut, code = runStdin(t, m, grantCode+"\n", "--demo", "approve", grantCode)
	if code != exitOK || !strings.Contains(out, "Approved "+grantCode) {
		t.Fatalf("--demo approve: exit %d\n%s\n%s", code, out, errOut)
	}
	// Every time in one format with its zone (approve said "6:32PM").
	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Za-z0-9+-]+`
	if !regexp.MustCompile(`Asked:   `+stamp+`, expires `+stamp+`\n`).MatchString(out) || !regexp.MustCompile(`repeated unchanged before `+stamp+`, runs once`).MatchString(out) {
		t.Errorf("approve's times lack the format or the zone:\n%s", out)
	}
	if out, _, code := runStdin(t, m, "", "--demo", "grants", "list"); code != exitOK || !regexp.MustCompile(grantCode+`\s+approved\s+`+stamp+`\s+https://pve-demo\.invalid:8006 as \S+\s+shutdown`).MatchString(out) {
		t.Errorf("--demo grants list: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(demoDir); err != nil {
		t.Errorf("the demo's grant directory: %v", err)
	}
	out, errOut, code = runStdin(t, m, "", demoCall...)
	if code != exitOK || !strings.Contains(out, "UPID:") {
		t.Fatalf("the approved call: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestGrantCommandHelp: approve, deny and grants print their usage on
// stdout and exit 0 when asked for help, also after --demo.
func TestGrantCommandHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"approve", "--help"}, {"deny", "-h"}, {"grants", "--help"}, {"--demo", "approve", "--help"}} {
		out, errOut, code := runStdin(t, map[string]string{}, "", args...)
		if code != exitOK || !strings.HasPrefix(out, "Usage:") || !strings.Contains(out, "approve CODE") || errOut != "" {
			t.Errorf("%q: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
}
