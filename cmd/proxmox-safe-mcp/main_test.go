package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// binName is the name the tests start the command under. The command is
// this test binary itself, copied to that name: TestMain runs main when it
// is started under it. That spares every test run a go build of the
// command (seconds on a loaded machine), and the code under test
// is the same package main.
const binName = "proxmox-safe-mcp"

// runningAsCommand reports whether this process was started by binary's
// path, to be the command rather than run tests.
func runningAsCommand() bool { return filepath.Base(os.Args[0]) == binName }

func TestMain(m *testing.M) {
	if runningAsCommand() {
		if os.Getenv(reportPatternsEnv) != "" {
			// TestStartCompilesNoPattern: say on exit which lazily
			// compiled patterns the process compiled.
			exitHooks = append(exitHooks, func() {
				fmt.Fprintf(os.Stderr, "compiled patterns: %q\n", lazyre.Compiled())
			})
		}
		main() // exits
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
		if testStateDir != "" {
			os.RemoveAll(testStateDir)
		}
		if testTmpDir != "" {
			os.RemoveAll(testTmpDir)
		}
		if builtPath != "" {
			os.Remove(builtPath)
		}
	}))
}

// binary returns the path of the command, a copy of this test binary
// (see binName) made once per test run. Tests drive it over real pipes.
func binary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "proxmox-safe-mcp-test-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, binName)
		binErr = copyExecutable(binPath)
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

// copyExecutable copies this test binary to path. A copy, not a link: the
// command resolves its own path (os.Executable) for the demo banner.
func copyExecutable(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// testStateDir is XDG_STATE_HOME for the binaries tests start, so that a
// default audit log or lock file never lands in the developer's home.
var testStateDir = func() string {
	if runningAsCommand() {
		return ""
	}
	d, err := os.MkdirTemp("", "proxmox-safe-mcp-test-state-")
	if err != nil {
		panic(err)
	}
	return d
}()

// testTmpDir is TMPDIR for the binaries tests start: a demo a test kills
// (or one that serves and keeps the audit log it recorded) leaves its
// temporary audit log, key and seal there, and TestMain removes it, so a
// test run leaves nothing in the developer's $TMPDIR.
var testTmpDir = func() string {
	if runningAsCommand() {
		return ""
	}
	d, err := os.MkdirTemp("", "proxmox-safe-mcp-test-tmp-")
	if err != nil {
		panic(err)
	}
	return d
}()

// cleanEnv is a minimal environment, so a developer's PVE_* variables
// cannot leak into a test, and the state and temporary directories are
// the test run's own.
func cleanEnv(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_STATE_HOME=" + testStateDir, "TMPDIR=" + testTmpDir}
	return append(env, extra...)
}

var protocolVersions = []string{"", "2025-11-25"}

func pvName(pv string) string {
	if pv == "" {
		return "latest"
	}
	return pv
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "e2e-test", Version: "0"}, nil)
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return m
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res
}

var (
	wantTools     = allToolNames() // the tools of the demo's safe profile
	shutdown100   = map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}
	phrase100     = "APPROVE shutdown pve1/qemu/100"
	auditLineRe   = regexp.MustCompile(`(?m)^  Audit log: (.+)$`)
	upidRe        = regexp.MustCompile(`^UPID:pve1:`)
	terminateWait = 30 * time.Second // generous guard against hangs, not a timing assertion
)

// TestStdioDemo drives the built binary in --demo mode through the go-sdk
// CommandTransport, on both protocol eras.
func TestStdioDemo(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	for _, pv := range protocolVersions {
		t.Run(pvName(pv), func(t *testing.T) {
			t.Parallel()
			var stderr syncBuffer
			cmd := exec.Command(bin, "--demo")
			cmd.Env = cleanEnv()
			cmd.Stderr = &stderr
			cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
			if err != nil {
				t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
			}
			closed := false
			defer func() {
				if !closed {
					cs.Close()
				}
			}()
			if pv != "" && cs.InitializeResult().ProtocolVersion != pv {
				t.Errorf("negotiated %q, want %q", cs.InitializeResult().ProtocolVersion, pv)
			}

			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range lt.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, wantTools) {
				t.Errorf("tools %q, want %q", names, wantTools)
			}

			res := call(t, cs, "cluster_status", map[string]any{})
			if res.IsError {
				t.Fatalf("cluster_status: %s", textOf(res))
			}
			if got := structured(t, res)["name"]; got != "demo" {
				t.Errorf("cluster name %v", got)
			}
			res = call(t, cs, "list_guests", map[string]any{"tag": "web"})
			if res.IsError {
				t.Fatalf("list_guests: %s", textOf(res))
			}
			if got := structured(t, res)["total"]; got != float64(4) {
				t.Errorf("list_guests tag=web total %v, want 4", got)
			}

			res = call(t, cs, "guest_power", shutdown100)
			if !res.IsError || !strings.Contains(textOf(res), phrase100) {
				t.Fatalf("guest_power without approval: isError %t, text %q; want a refusal naming %q", res.IsError, textOf(res), phrase100)
			}
			approved := map[string]any{"approval": phrase100}
			for k, v := range shutdown100 {
				approved[k] = v
			}
			res = call(t, cs, "guest_power", approved)
			if res.IsError {
				t.Fatalf("guest_power with approval: %s", textOf(res))
			}
			if upid, _ := structured(t, res)["upid"].(string); !upidRe.MatchString(upid) {
				t.Errorf("receipt upid %q", upid)
			}

			closed = true
			if err := cs.Close(); err != nil {
				t.Errorf("close (process exit status): %v\nstderr:\n%s", err, stderr.String())
			}
			se := stderr.String()
			if !strings.Contains(se, "DEMO MODE") || !strings.Contains(se, `"--demo"`) {
				t.Errorf("demo banner missing from stderr:\n%s", se)
			}
			m := auditLineRe.FindStringSubmatch(se)
			if m == nil {
				t.Fatalf("audit log path not printed:\n%s", se)
			}
			audit, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatalf("audit log: %v", err)
			}
			os.Remove(m[1])
			for _, ev := range []string{`"event":"refused"`, `"event":"approved"`, `"event":"submitted"`} {
				if !bytes.Contains(audit, []byte(ev)) {
					t.Errorf("audit log lacks %s:\n%s", ev, audit)
				}
			}
		})
	}
}

// proc is the binary on our own pipes, with every byte of stdout and
// stderr recorded.
type proc struct {
	cmd      *exec.Cmd
	cs       *mcp.ClientSession
	stdout   syncBuffer
	stderr   syncBuffer
	stdinW   *os.File
	stdoutR  *os.File
	readDone chan struct{}
}

// startProc starts bin and connects a client through IOTransport whose
// reader tees stdout into p.stdout.
func startProc(t *testing.T, pv string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{readDone: make(chan struct{})}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Env = env
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	p.stdinW, p.stdoutR = inW, outR
	// The client reads through a pipe fed by this copier, so closing the
	// client never closes the child's stdout under it (no SIGPIPE), and we
	// know when the child's stdout reached EOF.
	cr, cw := io.Pipe()
	go func() {
		defer close(p.readDone)
		buf := make([]byte, 32<<10)
		clientGone := false
		for {
			n, err := outR.Read(buf)
			if n > 0 {
				p.stdout.Write(buf[:n])
				if !clientGone {
					_, werr := cw.Write(buf[:n])
					clientGone = werr != nil
				}
			}
			if err != nil {
				cw.CloseWithError(err)
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.wait(t)
		}
		cr.Close()
		inW.Close()
		outR.Close()
	})
	cs, err := newClient().Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, p.stderr.String())
	}
	p.cs = cs
	return p
}

// wait waits for the process to exit and its stdout to drain; it fails the
// test if that takes longer than terminateWait (a hang, not a slow run).
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(terminateWait):
		p.cmd.Process.Kill()
		<-done
		t.Errorf("process did not exit within %v", terminateWait)
	}
	<-p.readDone
	return p.cmd.ProcessState.ExitCode()
}

// TestStdioHygiene checks that stdout carries only JSON-RPC, that closing
// stdin ends the process with 0, and that SIGTERM does too.
func TestStdioHygiene(t *testing.T) {
	t.Parallel()
	for _, pv := range protocolVersions {
		t.Run("stdin-close/"+pvName(pv), func(t *testing.T) {
			t.Parallel()
			p := startProc(t, pv, cleanEnv(), "--demo", "--log-level", "debug", "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl"))
			call(t, p.cs, "list_guests", map[string]any{})
			call(t, p.cs, "guest_power", shutdown100)
			call(t, p.cs, "node_status", map[string]any{"node": "pve9"})
			// Closing the client session closes its writer: our stdin.
			p.cs.Close()
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code %d after stdin closed\nstderr:\n%s", code, p.stderr.String())
			}
			assertJSONRPCOnly(t, p.stdout.String())
		})
	}
	t.Run("sigterm", func(t *testing.T) {
		t.Parallel()
		p := startProc(t, "", cleanEnv(), "--demo", "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl"))
		call(t, p.cs, "cluster_status", map[string]any{})
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t); code != 0 {
			t.Errorf("exit code %d after SIGTERM\nstderr:\n%s", code, p.stderr.String())
		}
		p.cs.Close()
		assertJSONRPCOnly(t, p.stdout.String())
	})
}

func assertJSONRPCOnly(t *testing.T, stdout string) {
	t.Helper()
	if stdout == "" {
		t.Fatal("stdout is empty")
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %.200q", sc.Text())
		}
	}
}

// TestSecretCanary runs the binary against a real (fake) Proxmox server over
// TLS pinned by fingerprint, with a canary token secret, and checks that the
// canary appears in no output, log line or audit record, on the success
// paths and on the authentication-failure paths.
func TestSecretCanary(t *testing.T) {
	t.Parallel()
	const (
		tokenID = "automation@pve!canary"
		canary  = "c4a7a3f1-0bad-4ca5-8eed-000000c4a7a3"
	)
	for _, tc := range []struct {
		name       string
		serverSide string // the secret the server accepts
		viaFile    bool
	}{
		{"env", canary, false},
		{"file", canary, true},
		{"rejected", "11111111-1111-4111-8111-111111111111", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cluster := proxmoxtest.DemoCluster()
			cluster.Tokens = map[string]*proxmoxtest.Token{tokenID: {
				Secret: tc.serverSide, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()},
			}}
			srv := proxmoxtest.NewServer(cluster)
			defer srv.Close()
			dir := t.TempDir()
			audit := filepath.Join(dir, "audit.jsonl")
			env := cleanEnv(
				"PVE_URL="+srv.URL,
				"PVE_API_TOKEN_ID="+tokenID,
				"PVE_TLS_FINGERPRINT="+srv.Fingerprint(),
				"PVE_ALLOWED_NODES=pve1,pve2,pve3",
				"PROXMOX_SAFE_AUDIT_LOG="+audit,
				"PROXMOX_SAFE_LOG_LEVEL=debug",
			)
			if tc.viaFile {
				f := filepath.Join(dir, "secret")
				if err := os.WriteFile(f, []byte(canary+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				env = append(env, "PVE_API_TOKEN_SECRET_FILE="+f)
			} else {
				env = append(env, "PVE_API_TOKEN_SECRET="+canary)
			}
			p := startProc(t, "", env)
			var outcomes []string
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"cluster_status", map[string]any{}},
				{"node_status", map[string]any{"node": "pve1"}},
				{"list_guests", map[string]any{}},
				{"guest_power", shutdown100},
				{"guest_power", map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown", "approval": phrase100}},
				{"snapshot_guest", map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "canary-test", "approval": "APPROVE snapshot pve1/qemu/100/canary-test"}},
				{"guest_power", map[string]any{"node": "pve1", "type": "qemu", "vmid": "100; rm", "action": "stop"}},
			} {
				res := call(t, p.cs, c.tool, c.args)
				outcomes = append(outcomes, fmt.Sprintf("%s:%t", c.tool, res.IsError))
			}
			p.cs.Close()
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code %d", code)
			}
			if tc.name == "rejected" {
				if !slices.Contains(outcomes, "cluster_status:true") {
					t.Errorf("wrong secret was not refused upstream: %v", outcomes)
				}
			} else if !slices.Contains(outcomes, "cluster_status:false") || outcomes[4] != "guest_power:false" {
				t.Errorf("calls did not succeed: %v\nstderr:\n%s", outcomes, p.stderr.String())
			}
			auditLog, _ := os.ReadFile(audit)
			for where, s := range map[string]string{"stdout": p.stdout.String(), "stderr": p.stderr.String(), "audit log": string(auditLog)} {
				for _, needle := range []string{canary, "PVEAPIToken"} {
					if strings.Contains(s, needle) {
						t.Errorf("%s contains %q", where, needle)
					}
				}
			}
			if len(auditLog) == 0 {
				t.Error("audit log is empty")
			}
			assertJSONRPCOnly(t, p.stdout.String())
		})
	}
}

// runBin runs the binary to completion and returns stdout, stderr and the
// exit code.
func runBin(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), terminateWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %q: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// TestBadConfig checks exit code 2 and one stderr line naming the variable.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	full := []string{
		"PVE_URL=https://127.0.0.1:1",
		"PVE_API_TOKEN_ID=automation@pve!mcp",
		"PVE_API_TOKEN_SECRET=CANARY-not-a-real-secret",
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no url", nil, nil, "PVE_URL"},
		{"bad bool", append(slices.Clone(full), "PROXMOX_SAFE_READ_ONLY=yes"), nil, "PROXMOX_SAFE_READ_ONLY"},
		{"no audit log and no state directory", append(slices.Clone(full), "HOME=", "XDG_STATE_HOME="), nil, "PROXMOX_SAFE_AUDIT_LOG"},
		{"plain http", append([]string{"PVE_URL=http://pve:8006", "PVE_API_TOKEN_ID=a@pve!mcp", "PVE_API_TOKEN_SECRET=CANARY-x"}, "PROXMOX_SAFE_READ_ONLY=1"), nil, "PVE_URL"},
		{"bad fingerprint", append(slices.Clone(full), "PROXMOX_SAFE_READ_ONLY=1", "PVE_TLS_FINGERPRINT=zz"), nil, "PVE_TLS_FINGERPRINT"},
		{"missing ca file", append(slices.Clone(full), "PROXMOX_SAFE_READ_ONLY=1", "PVE_CA_FILE=/nonexistent/ca.pem"), nil, "PVE_CA_FILE"},
		{"unwritable audit log", append(slices.Clone(full), "PROXMOX_SAFE_AUDIT_LOG=/dev/null/dir/audit.jsonl"), nil, "PROXMOX_SAFE_AUDIT_LOG"},
		{"unknown flag", nil, []string{"--bogus"}, "--bogus"},
		{"unknown tool", nil, []string{"--demo", "call", "no_such_tool"}, "no_such_tool"},
		{"bad json", nil, []string{"--demo", "call", "list_guests", "{nope"}, "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runBin(t, cleanEnv(tc.env...), tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			// Demo runs add one informational line before the error.
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tc.want) || !strings.HasPrefix(last, "proxmox-safe-mcp: ") {
				t.Errorf("stderr %q: want one line naming %s", stderr, tc.want)
			}
			if len(lines) > 1 && !strings.Contains(lines[0], "demo mode") {
				t.Errorf("stderr has %d lines: %q", len(lines), stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want empty", stdout)
			}
			if strings.Contains(stderr, "CANARY") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("stderr leaks a secret or a stack trace: %q", stderr)
			}
		})
	}
}

// TestCLI checks the shell commands in demo mode.
func TestCLI(t *testing.T) {
	t.Parallel()
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		out, _, code := runBin(t, cleanEnv(), "--version")
		if code != 0 || !strings.HasPrefix(out, "proxmox-safe-mcp ") {
			t.Errorf("--version: %d %q", code, out)
		}
	})
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		out, _, code := runBin(t, cleanEnv(), "--help")
		if code != 0 || !strings.Contains(out, "PVE_API_TOKEN_SECRET_FILE") || !strings.Contains(out, "--allowed-nodes") {
			t.Errorf("--help: %d %q", code, out)
		}
	})
	t.Run("tools", func(t *testing.T) {
		t.Parallel()
		out, _, code := runBin(t, cleanEnv(), "--demo", "tools")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		for _, want := range []string{`cluster_status\s+read`, `guest_power\s+power`, `snapshot_guest\s+snapshot`, `permissions_check\s+read`} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("tools output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("tools read-only", func(t *testing.T) {
		t.Parallel()
		out, _, code := runBin(t, cleanEnv(), "--demo", "--read-only", "tools")
		if code != 0 || strings.Contains(out, "guest_power") || !strings.Contains(out, "list_guests") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("call read", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runBin(t, cleanEnv(), "--demo", "call", "list_guests", `{"node":"pve2"}`)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res struct {
			Total  int `json:"total"`
			Guests []struct {
				VMID int    `json:"vmid"`
				Node string `json:"node"`
			} `json:"guests"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("stdout is not the JSON result: %v\n%s", err, out)
		}
		if res.Total != 5 || res.Guests[0].Node != "pve2" {
			t.Errorf("unexpected result: %+v", res)
		}
	})
	t.Run("call refused", func(t *testing.T) {
		t.Parallel()
		_, errOut, code := runBin(t, cleanEnv(), "--demo", "call", "guest_power", `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown"}`)
		if code != 1 || !strings.Contains(errOut, phrase100) {
			t.Errorf("exit %d, stderr %q: want 1 and the phrase", code, errOut)
		}
	})
	t.Run("call approved", func(t *testing.T) {
		t.Parallel()
		audit := filepath.Join(t.TempDir(), "audit.jsonl")
		out, errOut, code := runBin(t, cleanEnv(), "--demo", "--audit-log", audit, "call", "guest_power",
			`{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"`+phrase100+`"}`)
		if code != 0 || !strings.Contains(out, `"upid": "UPID:pve1:`) {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		if b, _ := os.ReadFile(audit); !bytes.Contains(b, []byte(`"event":"submitted"`)) {
			t.Errorf("--audit-log not kept/used: %s", b)
		}
	})
	t.Run("call schema error", func(t *testing.T) {
		t.Parallel()
		_, errOut, code := runBin(t, cleanEnv(), "--demo", "call", "node_status", `{"node":"pve1","extra":1}`)
		if code != 1 || errOut == "" {
			t.Errorf("exit %d stderr %q", code, errOut)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer = testutil.SyncBuffer

// allToolNames lists every tool the safe profile offers (all but the
// responder profile's), sorted: the list grows with each release.
func allToolNames() []string {
	var names []string
	safe, _ := proxmoxsafe.ProfileSafe.Classes()
	for _, ti := range mcpserver.Tools(nil, nil) {
		if ti.Class != "" && !slices.Contains(safe, ti.Class) {
			continue // the responder and admin profiles' tools
		}
		names = append(names, ti.Name)
	}
	slices.Sort(names)
	return names
}

// TestLogFormatJSON: with --log-format json every line a serving process
// writes to stderr is one JSON object with time, level and msg — the
// start-up warning (no allowed nodes) and the serving line included — so
// a log shipper reads it without a parser per format; text stays the
// default.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	_, env := fakeEnv(t, "PROXMOX_SAFE_READ_ONLY", "true")
	_, stderr, code := runWith(t, env, "--log-format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var msgs []string
	for line := range strings.Lines(stderr) {
		var rec struct{ Time, Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Time == "" || rec.Level == "" || rec.Msg == "" {
			t.Errorf("not a JSON log record (%v): %q", err, line)
			continue
		}
		msgs = append(msgs, rec.Level+" "+rec.Msg)
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, "WARN PVE_ALLOWED_NODES is empty") }) ||
		!slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, "INFO serving MCP on stdio") }) {
		t.Errorf("records %q lack the start-up warning or the serving line", msgs)
	}
	env["PROXMOX_SAFE_LOG_FORMAT"] = "text"
	if _, stderr, _ := runWith(t, env); !strings.Contains(stderr, `level=INFO msg="serving MCP on stdio"`) {
		t.Errorf("text format: %s", stderr)
	}
	env["PROXMOX_SAFE_LOG_FORMAT"] = "yaml"
	if _, stderr, code := runWith(t, env); code != exitUsage || !strings.Contains(stderr, "PROXMOX_SAFE_LOG_FORMAT (--log-format): must be text or json") {
		t.Errorf("unknown format: exit %d, %s", code, stderr)
	}
}
