package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const operatorSecret = "operator-test-secret-0123456789abcdef"

// TestApprovalPageNeedsGrantLevel: a page for grants nobody asks for is a
// configuration mistake; the binary says so and exits 2.
func TestApprovalPageNeedsGrantLevel(t *testing.T) {
	t.Parallel()
	opFile := filepath.Join(t.TempDir(), "operator")
	if err := os.WriteFile(opFile, []byte(operatorSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runBin(t, cleanEnv("PROXMOX_SAFE_OPERATOR_TOKEN_FILE="+opFile), "--demo", "--http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(stderr, "no mutation class uses the grant level") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

var (
	pageURLRe = regexp.MustCompile(`approval page \(operator login required\): (http://127\.0\.0\.1:\d+/approve/grant/[0-9A-Z-]+)`)
	csrfRe    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// TestApprovalPageEndToEnd runs the binary in HTTP mode with the page:
// a refused call names the grant's page; the MCP token does not open it;
// the operator logs in, approves with the VMID typed in; the repeated call
// runs once and the audit log names the page's operator and the code.
func TestApprovalPageEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opFile := filepath.Join(dir, "operator")
	if err := os.WriteFile(opFile, []byte(operatorSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	p := startHTTP(t, cleanEnv("MCP_AUTH_TOKEN="+httpToken, "PROXMOX_SAFE_OPERATOR_TOKEN_FILE="+opFile,
		"PROXMOX_SAFE_OPERATOR_NAME=alice", "PROXMOX_SAFE_AUDIT_LOG="+audit, "XDG_STATE_HOME="+dir), // the demo's own grant directory, this test's alone
		"--demo", "--approvals", "power=grant")
	cs := httpClient(t, p.url, httpToken)
	defer cs.Close()

	res := call(t, cs, "guest_power", shutdown100)
	code := askedCode(t, res)
	m := pageURLRe.FindStringSubmatch(textOf(res))
	if m == nil || !strings.HasSuffix(m[1], code) {
		t.Fatalf("the refusal does not name the grant's page:\n%s", textOf(res))
	}
	grantURL := m[1]
	base := strings.TrimSuffix(p.url, "/mcp")

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	send := func(method, u string, form url.Values, hdr map[string]string) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, u, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			}
			req.Header.Set(k, v)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The MCP bearer token opens nothing, as a header or as the secret.
	if st, body := send("GET", grantURL, nil, map[string]string{"Authorization": "Bearer " + httpToken}); st != http.StatusUnauthorized || strings.Contains(body, "Approve once") {
		t.Errorf("grant page with the MCP token: %d", st)
	}
	if st, _ := send("POST", base+"/approve/login", url.Values{"secret": {httpToken}}, nil); st != http.StatusUnauthorized {
		t.Errorf("login with the MCP token: %d", st)
	}
	// A foreign Host (DNS rebinding) is refused before the page.
	if st, _ := send("GET", base+"/approve/", nil, map[string]string{"Host": "evil.example"}); st != http.StatusForbidden {
		t.Errorf("foreign Host: %d", st)
	}
	if st, body := send("POST", base+"/approve/login", url.Values{"secret": {operatorSecret}}, nil); st != http.StatusOK || !strings.Contains(body, code) {
		t.Fatalf("login: %d\n%s", st, body)
	}
	st, body := send("GET", grantURL, nil, nil)
	tok := csrfRe.FindStringSubmatch(body)
	if st != http.StatusOK || tok == nil || !strings.Contains(body, "pve1/qemu/100") {
		t.Fatalf("grant page: %d\n%s", st, body)
	}
	if res := call(t, cs, "guest_power", shutdown100); askedCode(t, res) != code {
		t.Fatal("viewing the page changed the grant")
	}
	if st, body := send("POST", grantURL, url.Values{"csrf": {tok[1]}, "decision": {"approve"}, "confirm": {"100"}}, nil); st != http.StatusOK || !strings.Contains(body, "approval-page:alice") {
		t.Fatalf("approve: %d\n%s", st, body)
	}
	res = call(t, cs, "guest_power", shutdown100)
	if res.IsError || !strings.Contains(textOf(res), "UPID:") {
		t.Fatalf("the approved call: %s", textOf(res))
	}
	if st, _ := send("POST", grantURL, url.Values{"csrf": {tok[1]}, "decision": {"approve"}, "confirm": {"100"}}, nil); st != http.StatusConflict {
		t.Errorf("approving again: %d, want 409", st)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit %d:\n%s", code, p.stderr.String())
	}
	log, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"approver":"grant"`, `"grant":"` + code + `"`, `"operator":"approval-page:alice"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
	for _, s := range []string{operatorSecret, httpToken} {
		if strings.Contains(string(log), s) || strings.Contains(p.stderr.String(), s) {
			t.Errorf("a secret is in the audit log or stderr")
		}
	}
	if !strings.Contains(p.stderr.String(), "serving the operator's approval page") || !strings.Contains(p.stderr.String(), "approval page decision") {
		t.Errorf("stderr lacks the page's log lines:\n%s", p.stderr.String())
	}
}
