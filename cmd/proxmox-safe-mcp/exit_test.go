package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Start and exit on stdin close, what every short-lived client session
// pays for: nothing on the way to the
// first answers that is not needed for them; a prompt exit that loses
// nothing.

// reportPatternsEnv makes the command, started by a test, print on exit
// which lazily compiled patterns it compiled (TestMain).
const reportPatternsEnv = "PROXMOX_SAFE_TEST_REPORT_PATTERNS"

// TestStartCompilesNoPattern: a server with a full configuration (token,
// node allowlist, audit log, the default profile's mutation tools) answers
// initialize and tools/list without compiling one regular expression: the
// checks at start are written out (ValidNode, internal/pveid, keyFamily),
// and the patterns of later checks compile on first use. Over real pipes.
func TestStartCompilesNoPattern(t *testing.T) {
	t.Parallel()
	_, envMap := fakeEnv(t, "PVE_ALLOWED_NODES", "pve1,pve2", "PROXMOX_SAFE_AUDIT_LOG", filepath.Join(t.TempDir(), "audit.jsonl"))
	p := listThenExit(t, envMap, reportPatternsEnv+"=1")
	stderr := p.stderr.String()
	i := strings.Index(stderr, "compiled patterns: ")
	if i < 0 {
		t.Fatalf("no report of compiled patterns:\n%s", stderr)
	}
	if line, _, _ := strings.Cut(stderr[i:], "\n"); line != "compiled patterns: []" {
		t.Errorf("the start compiled patterns: %s", line)
	}
}

// TestExitAfterListIsQuiet: a host that initializes, lists the tools and
// closes stdin at once (a probe, a reconnect) gets exit 0 and a clean
// stderr. The background privilege check used to start as soon as the list
// was answered; the exit then waited for its TLS handshake and logged that
// the check "did not complete", on every such exit. Over real pipes,
// against the fake Proxmox (the demo skips the check).
func TestExitAfterListIsQuiet(t *testing.T) {
	t.Parallel()
	_, envMap := fakeEnv(t, "PVE_ALLOWED_NODES", "pve1", "PROXMOX_SAFE_READ_ONLY", "true")
	p := listThenExit(t, envMap)
	if s := p.stderr.String(); strings.Contains(s, "did not complete") || strings.Contains(s, "level=ERROR") {
		t.Errorf("stderr after a prompt exit:\n%s", s)
	}
	assertJSONRPCOnly(t, p.stdout.String())
}

// listThenExit starts the command over real pipes with envMap and extra
// (KEY=value), lists the tools, closes stdin and requires exit 0; it
// returns the ended process for its output.
func listThenExit(t *testing.T, envMap map[string]string, extra ...string) *proc {
	t.Helper()
	p := startListed(t, cleanEnv(append(extra, envList(envMap)...)...))
	p.cs.Close()
	p.stdinW.Close()
	if code := p.wait(t); code != exitOK {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	return p
}

// envList is envMap as KEY=value entries.
func envList(envMap map[string]string) []string {
	var env []string
	for k, v := range envMap {
		env = append(env, k+"="+v)
	}
	return env
}

// startListed starts the command over real pipes with env and lists its
// tools, as a host does with every server it is configured with.
func startListed(t *testing.T, env []string) *proc {
	t.Helper()
	p := startProc(t, "", env)
	if _, err := p.cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExitWithMutationInFlight: stdin closes while a start is on its way
// to Proxmox (the host sent the call and hung up). The server finishes the
// call before it ends the session: the host gets its answer on stdout,
// the audit log verifies and holds the start as submitted (with Proxmox's
// UPID) after its "approved" record, and the server exits 0. Before the
// end of input waited for answers, go-sdk cancelled the call when its
// input ended: no answer, and "failed … may have reached Proxmox".
func TestExitWithMutationInFlight(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	srv, envMap := fakeEnv(t, "PVE_ALLOWED_NODES", "pve1,pve2", "PROXMOX_SAFE_AUDIT_LOG", path)
	env := envList(envMap)
	srv.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/nodes/*", Latency: time.Second})
	cmd := exec.Command(binary(t))
	cmd.Env = cleanEnv(env...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"guest_power","arguments":`+startGuest103+`}}`+"\n")
	for len(srv.MutatingRequests()) == 0 { // the start is on its way to Proxmox
		select {
		case err := <-done:
			t.Fatalf("exited before the mutation was sent: %v\n%s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	in.Close() // the host hangs up while the start is in flight
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(terminateWait): // a hang guard, not a timing
		cmd.Process.Kill()
		<-done
		t.Fatalf("did not exit after stdin closed\n%s", stderr.String())
	}
	var events []string
	var last struct{ Event, Reason string }
	sc := bufio.NewScanner(bytes.NewReader(must(os.ReadFile(path))))
	for sc.Scan() {
		var r struct{ Event, Op, Reason, UPID string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Op == "GuestPower" {
			events = append(events, r.Event)
			last.Event, last.Reason = r.Event, r.Reason
			if r.Event == "submitted" && !strings.HasPrefix(r.UPID, "UPID:") {
				t.Errorf("the submitted record carries UPID %q, want Proxmox's", r.UPID)
			}
		}
	}
	if len(events) < 2 || events[0] != "approved" || !slices.Contains(events, "submitted") || slices.Contains(events, "failed") {
		t.Errorf("audit records of the start: %v (last reason %q), want approved, then submitted\nstderr:\n%s", events, last.Reason, stderr.String())
	}
	answered := false
	for line := range strings.Lines(stdout.String()) {
		var rep reply
		if json.Unmarshal([]byte(line), &rep) == nil && string(rep.ID) == "2" {
			answered = rep.Error == nil && rep.Result != nil
		}
	}
	if !answered {
		t.Errorf("no answer to the start on stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var verify, verr bytes.Buffer
	if code := run(t.Context(), []string{"audit", "verify", path}, envLookup(envMap), nil, &verify, &verr); code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", code, verify.String(), verr.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func envLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
