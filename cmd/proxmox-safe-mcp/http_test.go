package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	httpToken  = "mcp-test-token-0123456789abcdef0123456789abcdef"
	httpCanary = "c4a7a3f1-0bad-4ca5-8eed-0000000ca9a2"
)

// TestHTTPRefusesNonLoopbackWithoutAuth runs the binary: a non-loopback
// bind without a token must not start (exit 2, nothing listening).
func TestHTTPRefusesNonLoopbackWithoutAuth(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		_, stderr, code := runBin(t, cleanEnv(), "--demo", "--http", addr)
		if code != exitUsage || !strings.Contains(stderr, "not a loopback address") {
			t.Errorf("--http %s: exit %d, stderr %q; want exit 2 and a refusal", addr, code, stderr)
		}
	}
}

var listenRe = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/(?:mcp|sse))`)

// httpProc is the binary serving HTTP against a fake cluster.
type httpProc struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	url    string
	done   chan struct{}
}

func startHTTP(t *testing.T, env []string, args ...string) *httpProc {
	t.Helper()
	p := &httpProc{done: make(chan struct{})}
	p.cmd = exec.Command(binary(t), append([]string{"--http", "127.0.0.1:0"}, args...)...)
	p.cmd.Env = env
	p.cmd.Stdout = io.Discard
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(terminateWait)
	for {
		if m := listenRe.FindStringSubmatch(p.stderr.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("server exited: %s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start:\n%s", p.stderr.String())
		}
	}
}

// stop sends SIGTERM and returns the exit code.
func (p *httpProc) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(terminateWait):
		t.Fatalf("no exit after SIGTERM:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func httpClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient().Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func rawPost(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, fmt.Sprint(resp.Header) + "\n" + string(b)
}

// TestHTTPEndToEnd: the binary against a fake Proxmox with a canary secret,
// authenticated by MCP_AUTH_TOKEN_FILE. A client with the token calls
// tools; bad requests are refused before Proxmox; the canary appears in no
// response and no log line; SIGTERM ends it with 0.
func TestHTTPEndToEnd(t *testing.T) {
	t.Parallel()
	const tokenID = "automation@pve!http"
	cluster := proxmoxtest.DemoCluster()
	cluster.Tokens = map[string]*proxmoxtest.Token{tokenID: {
		Secret: httpCanary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()},
	}}
	fake := proxmoxtest.NewServer(cluster)
	defer fake.Close()
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "mcp-token")
	if err := os.WriteFile(tokFile, []byte(httpToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startHTTP(t, cleanEnv(
		"PVE_URL="+fake.URL, "PVE_API_TOKEN_ID="+tokenID, "PVE_API_TOKEN_SECRET="+httpCanary,
		"PVE_TLS_FINGERPRINT="+fake.Fingerprint(), "PVE_ALLOWED_NODES=pve1,pve2,pve3",
		"PROXMOX_SAFE_AUDIT_LOG="+filepath.Join(dir, "audit.jsonl"), "PROXMOX_SAFE_LOG_LEVEL=debug",
		"MCP_AUTH_TOKEN_FILE="+tokFile,
	))
	var seen strings.Builder

	cs := httpClient(t, p.url, httpToken)
	for _, tool := range []string{"cluster_status", "list_guests"} {
		res := call(t, cs, tool, map[string]any{})
		if res.IsError {
			t.Errorf("%s: %s", tool, textOf(res))
		}
		seen.WriteString(textOf(res))
	}
	res := call(t, cs, "guest_power", map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown", "approval": phrase100})
	if res.IsError {
		t.Errorf("guest_power: %s", textOf(res))
	}
	seen.WriteString(textOf(res))
	cs.Close()

	// The privilege check runs beside the first call; once it has read
	// the privileges, the log grows only by what the requests below cause.
	waitFor(t, "the privilege check's requests", func() bool { return privilegesRead(fake) })
	before := len(fake.Requests())
	port := strings.TrimSuffix(strings.TrimPrefix(p.url, "http://127.0.0.1:"), "/mcp")
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong-" + httpToken}, http.StatusUnauthorized},
		{"proxmox token", map[string]string{"Authorization": "PVEAPIToken=" + tokenID + "=" + httpCanary}, http.StatusUnauthorized},
		{"evil origin", map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"null origin", map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "null"}, http.StatusForbidden},
		{"bound origin, accepted by default", map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "http://127.0.0.1:" + port}, http.StatusOK},
		{"bound origin without a token", map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusUnauthorized},
		{"localhost origin, not the bound one", map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "http://localhost:" + port}, http.StatusForbidden},
	} {
		code, body := rawPost(t, p.url, tc.hdr)
		seen.WriteString(body)
		if code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		}
		if tc.want == http.StatusUnauthorized && !strings.Contains(body, "Www-Authenticate:[Bearer") {
			t.Errorf("%s: no WWW-Authenticate challenge:\n%s", tc.name, body)
		}
	}
	code, body := rawPost(t, p.url+"?access_token="+httpToken, nil)
	if code != http.StatusUnauthorized {
		t.Errorf("token in the query string: %d, want 401", code)
	}
	seen.WriteString(body)
	if after := len(fake.Requests()); after != before {
		t.Errorf("refused requests reached Proxmox: %d new upstream requests", after-before)
	}
	var hcOut, hcErr strings.Builder
	if c := healthcheck(t.Context(), []string{"--url", strings.TrimSuffix(p.url, "/mcp") + "/healthz"}, func(string) (string, bool) { return "", false }, &hcOut, &hcErr); c != 0 || hcOut.String() != "ok\n" {
		t.Errorf("healthcheck: exit %d, %q %q", c, hcOut.String(), hcErr.String())
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM:\n%s", code, p.stderr.String())
	}
	for where, s := range map[string]string{"responses": seen.String(), "stderr": p.stderr.String()} {
		for _, needle := range []string{httpCanary, "PVEAPIToken", httpToken} {
			if strings.Contains(s, needle) {
				t.Errorf("%s contain %q", where, needle)
			}
		}
	}
	if !strings.Contains(p.stderr.String(), `reason="origin not allowed"`) {
		t.Errorf("refused origin not logged:\n%s", p.stderr.String())
	}
}

// TestHTTPGracefulShutdown: SIGTERM while a tool call waits on a slow
// Proxmox lets the call finish, then the process exits 0.
func TestHTTPGracefulShutdown(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	defer fake.Close()
	p := startHTTP(t, cleanEnv(
		"PVE_URL="+fake.URL, "PVE_API_TOKEN_ID="+proxmoxtest.DefaultTokenID, "PVE_API_TOKEN_SECRET="+proxmoxtest.DefaultTokenSecret,
		"PVE_TLS_FINGERPRINT="+fake.Fingerprint(), "PROXMOX_SAFE_READ_ONLY=true", "MCP_AUTH_TOKEN="+httpToken,
	))
	cs := httpClient(t, p.url, httpToken)
	defer cs.Close()
	fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/resources", Latency: 1500 * time.Millisecond, Times: 1})
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}})
		done <- result{res, err}
	}()
	// Wait until the call has reached the fake, then signal.
	deadline := time.Now().Add(terminateWait)
	for !slowStarted(fake) {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached Proxmox")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	r := <-done
	if r.err != nil || r.res.IsError {
		t.Errorf("in-flight call during shutdown: %v %v", r.err, r.res)
	}
	select {
	case <-p.done:
	case <-time.After(terminateWait):
		t.Fatal("no exit after SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d:\n%s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "signal received; shutting down") {
		t.Errorf("no shutdown log line:\n%s", p.stderr.String())
	}
}

func slowStarted(fake *proxmoxtest.Server) bool {
	for _, r := range fake.Requests() {
		if r.Path == "/cluster/resources" {
			return true
		}
	}
	return false
}

// TestHTTPLegacySSE: MCP_TRANSPORT=sse serves the legacy HTTP+SSE
// transport on /sse behind the same rules: go-sdk's SSE client with the
// token lists and calls tools; an evil Origin or Host and a missing token
// are refused before anything reaches Proxmox; the canary secret shows up
// nowhere.
func TestHTTPLegacySSE(t *testing.T) {
	t.Parallel()
	const tokenID = "automation@pve!sse"
	cluster := proxmoxtest.DemoCluster()
	cluster.Tokens = map[string]*proxmoxtest.Token{tokenID: {
		Secret: httpCanary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()},
	}}
	fake := proxmoxtest.NewServer(cluster)
	defer fake.Close()
	p := startHTTP(t, cleanEnv(
		"PVE_URL="+fake.URL, "PVE_API_TOKEN_ID="+tokenID, "PVE_API_TOKEN_SECRET="+httpCanary,
		"PVE_TLS_FINGERPRINT="+fake.Fingerprint(), "PVE_ALLOWED_NODES=pve1",
		"PROXMOX_SAFE_READ_ONLY=true", "MCP_TRANSPORT=sse", "MCP_AUTH_TOKEN="+httpToken,
	))
	if !strings.HasSuffix(p.url, "/sse") {
		t.Fatalf("SSE endpoint %s, want …/sse", p.url)
	}
	cs, err := newClient().Connect(t.Context(), &mcp.SSEClientTransport{
		Endpoint: p.url, HTTPClient: &http.Client{Transport: bearerRT{httpToken}},
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.stderr.String())
	}
	var seen strings.Builder
	res := call(t, cs, "list_guests", map[string]any{})
	if res.IsError || !strings.Contains(textOf(res), "guests") {
		t.Errorf("list_guests over SSE: %s", textOf(res))
	}
	seen.WriteString(textOf(res))
	cs.Close()

	// The privilege check runs beside the first call; once it has read
	// the privileges, the log grows only by what the requests below cause.
	waitFor(t, "the privilege check's requests", func() bool { return privilegesRead(fake) })
	before := len(fake.Requests())
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"evil origin", map[string]string{"Authorization": "Bearer " + httpToken, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"evil host", map[string]string{"Authorization": "Bearer " + httpToken, "Host": "evil.example"}, http.StatusForbidden},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range tc.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		seen.Write(b)
		if resp.StatusCode != tc.want {
			t.Errorf("GET /sse, %s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("refused requests caused %d upstream requests", n)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit %d after SIGTERM", code)
	}
	for where, text := range map[string]string{"results": seen.String(), "stderr": p.stderr.String()} {
		if strings.Contains(text, httpCanary) || strings.Contains(text, httpToken) {
			t.Errorf("a secret appears in %s", where)
		}
	}
}

// TestHealthcheckFindsAliasAddress: a container configured with MCP_HOST
// and MCP_PORT (the aliases) is probed on that port, not on 8000.
func TestHealthcheckFindsAliasAddress(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			fmt.Fprint(w, "ok")
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, kv := range [][]string{
		{"MCP_HOST", "0.0.0.0", "MCP_PORT", port},
		{"MCP_PORT", port},
	} {
		var out, errb strings.Builder
		if code := healthcheck(t.Context(), nil, env(kv...), &out, &errb); code != exitOK {
			t.Errorf("%q: exit %d: %s", kv, code, errb.String())
		}
	}
}

// TestHTTPListenErrorIsConfiguration: a port another listener holds and an
// address no interface has are configuration errors, exit 2 as documented
// (they exited 1, the code of a runtime failure), with what to do.
func TestHTTPListenErrorIsConfiguration(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct{ addr, want string }{
		{busy.Addr().String(), "another process listens there"},
		{"127.0.0.1:99999", "the port must be at most 65535"},
	} {
		_, stderr, code := runIn(t, map[string]string{}, "--demo", "--http", tc.addr)
		if code != exitUsage || !strings.Contains(stderr, "MCP_HTTP_ADDR (--http)") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--http %s: exit %d, stderr %q; want exit 2 and %q", tc.addr, code, stderr, tc.want)
		}
	}
}

// TestHTTPDemoBannerClaudeLine: the HTTP demo says how to connect Claude
// Code to the address it actually listens on; with a bearer token the
// line names the header, never the token.
func TestHTTPDemoBannerClaudeLine(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, cleanEnv(), "--demo")
	want := "connect Claude Code with: claude mcp add --transport http proxmox-safe-demo " + p.url + "\n"
	deadline := time.Now().Add(terminateWait)
	for !strings.Contains(p.stderr.String(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
	}
	if got := claudeAddHTTP("sse", "http://127.0.0.1:1/sse", true); got != `claude mcp add --transport sse proxmox-safe-demo http://127.0.0.1:1/sse --header "Authorization: Bearer $(cat YOUR_MCP_TOKEN_FILE)"` {
		t.Errorf("with a token: %s", got)
	}
}
