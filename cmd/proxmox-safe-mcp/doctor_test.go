package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/demo"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const doctorToken = "automation@pve!doctor"

// doctorCluster is the demo cluster with one token holding privs.
func doctorCluster(privs map[string][]string) *proxmoxtest.Cluster {
	c := proxmoxtest.DemoCluster()
	c.Tokens = map[string]*proxmoxtest.Token{doctorToken: {Secret: "d0c70000-0000-4000-8000-000000000000", Privileges: privs}}
	return c
}

// wellScopedPrivileges is what the safe profile on pve1, pve2 needs,
// backups and the guest agent reads (optional privileges) included.
func wellScopedPrivileges() map[string][]string {
	return map[string][]string{
		"/":        {"Sys.Audit"},
		"/vms":     {"VM.Audit", "VM.PowerMgmt", "VM.Snapshot", "VM.Backup", "VM.GuestAgent.Audit"},
		"/storage": {"Datastore.Audit", "Datastore.AllocateSpace"},
	}
}

// runDoctor runs `proxmox-safe-mcp doctor` in-process against srv with the
// given extra environment (key, value pairs override the defaults).
func runDoctor(t *testing.T, srv *proxmoxtest.Server, kv ...string) (string, string, int) {
	t.Helper()
	m := map[string]string{
		"PVE_URL":              srv.URL,
		"PVE_API_TOKEN_ID":     doctorToken,
		"PVE_API_TOKEN_SECRET": "d0c70000-0000-4000-8000-000000000000",
		"PVE_TLS_FINGERPRINT":  srv.Fingerprint(),
		"PVE_ALLOWED_NODES":    "pve1,pve2",
		// serve needs it with the safe profile; doctor only checks the setting.
		"PROXMOX_SAFE_AUDIT_LOG": filepath.Join(t.TempDir(), "audit.jsonl"),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	lookup := func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"doctor"}, lookup, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestDoctorWellScoped(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()
	out, errOut, code := runDoctor(t, srv)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, out,
		"[ok]   configuration: "+srv.URL+"/api2/json, token "+doctorToken+", profile safe, mutation classes power, snapshot, allowed nodes pve1, pve2",
		"[ok]   reachable: TCP connection to ",
		"[ok]   TLS: trusted by the pinned fingerprint (PVE_TLS_FINGERPRINT); server certificate SHA-256 "+srv.Fingerprint(),
		"[ok]   token: accepted; Proxmox VE 9.1.1",
		"[ok]   node pve1: member, online",
		"[ok]   node pve2: member, online",
		"[ok]   privileges: every enabled tool",
		"Result: everything checked is fine.",
	)
	if strings.Contains(out, "[warn]") || strings.Contains(out, "[FAIL]") {
		t.Errorf("unexpected findings:\n%s", out)
	}
}

func TestDoctorOverPrivileged(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/": proxmoxtest.AllPrivileges()}))
	defer srv.Close()
	out, _, code := runDoctor(t, srv)
	if code != doctor.ExitDangerous {
		t.Fatalf("exit %d, want %d\n%s", code, doctor.ExitDangerous, out)
	}
	wantLines(t, out,
		"[ok]   privileges: every enabled tool",
		"[warn] privileges: Permissions.Modify held on / but no enabled tool needs it — dangerous: the token can grant itself or others any privilege",
		"[warn] privileges: Sys.Console held on /",
		"prefer a token with only the required role: pveum role add ProxmoxSafeMCP",
		"Result: working, but the token holds dangerous privileges",
	)
}

func TestDoctorMissingPrivileges(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/vms": {"VM.Audit"}}))
	defer srv.Close()
	out, _, code := runDoctor(t, srv, "PROXMOX_SAFE_READ_ONLY", "true")
	if code != doctor.ExitProblems {
		t.Fatalf("exit %d, want %d\n%s", code, doctor.ExitProblems, out)
	}
	wantLines(t, out,
		"[ok]   token: accepted",
		"[FAIL] nodes: cannot read the cluster status", // Sys.Audit on / is missing
		"[FAIL] privileges: Sys.Audit on / missing, needed by cluster_status",
		"pveum acl modify / --tokens 'automation@pve!doctor' --roles ProxmoxSafeMCP",
		"pveum acl modify / --users 'automation@pve' --roles ProxmoxSafeMCP",
		"[FAIL] privileges: Sys.Audit on /nodes/pve2 missing, needed by node_status",
		"create the role first: pveum role add ProxmoxSafeMCP --privs 'Datastore.Audit,Sys.Audit,VM.Audit'",
		"Result: ",
	)
	if strings.Contains(out, "VM.PowerMgmt") {
		t.Errorf("read-only mode asks for VM.PowerMgmt:\n%s", out)
	}
}

func TestDoctorWrongCA(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()
	other := proxmoxtest.NewServer(nil)
	other.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, other.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := runDoctor(t, srv, "PVE_TLS_FINGERPRINT", "", "PVE_CA_FILE", ca)
	if code != doctor.ExitProblems {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantLines(t, out,
		"[FAIL] TLS: NOT trusted: the certificate does not verify against PVE_CA_FILE "+ca,
		"server certificate SHA-256 fingerprint: "+srv.Fingerprint(),
		"PVE_TLS_FINGERPRINT="+srv.Fingerprint(),
	)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the token was sent to an untrusted server (%d requests)", n)
	}
	// The right CA file works.
	good := filepath.Join(t.TempDir(), "good.pem")
	if err := os.WriteFile(good, srv.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = runDoctor(t, srv, "PVE_TLS_FINGERPRINT", "", "PVE_CA_FILE", good)
	if code != exitOK || !strings.Contains(out, "[ok]   TLS: trusted by the CA file "+good) {
		t.Errorf("good CA: exit %d\n%s", code, out)
	}
}

func TestDoctorSystemRootsAndPinMismatch(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()
	out, _, code := runDoctor(t, srv, "PVE_TLS_FINGERPRINT", "")
	if code != doctor.ExitProblems || !strings.Contains(out, "[FAIL] TLS: NOT trusted by the system's root CAs") ||
		!strings.Contains(out, srv.Fingerprint()) {
		t.Errorf("system roots: exit %d\n%s", code, out)
	}
	wrong := strings.Repeat("AB:", 31) + "AB"
	out, _, code = runDoctor(t, srv, "PVE_TLS_FINGERPRINT", wrong)
	if code != doctor.ExitProblems || !strings.Contains(out, "does not match PVE_TLS_FINGERPRINT") {
		t.Errorf("pin mismatch: exit %d\n%s", code, out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached an untrusted server", n)
	}
}

func TestDoctorUnreachable(t *testing.T) {
	t.Parallel()
	// Refused at once, for the whole test: a closed listener's port may be
	// taken by another listener on a busy machine.
	addr := testutil.RefusingAddr(t)
	srv := proxmoxtest.NewServer(nil)
	defer srv.Close()
	out, _, code := runDoctor(t, srv, "PVE_URL", "https://"+addr)
	if code != doctor.ExitProblems {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantLines(t, out, "[FAIL] reachable: cannot open a TCP connection to "+addr, "check PVE_URL")
	if strings.Contains(out, "TLS") || strings.Contains(out, "token:") {
		t.Errorf("doctor went on after an unreachable URL:\n%s", out)
	}
}

func TestDoctorTokenRejectedAndNodes(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()
	out, errOut, code := runDoctor(t, srv, "PVE_API_TOKEN_SECRET", "99999999-0000-4000-8000-000000000000")
	if code != doctor.ExitProblems {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantLines(t, out, "[FAIL] token: rejected by Proxmox (401)", "has not expired")
	if strings.Contains(out+errOut, "99999999-0000") {
		t.Error("the secret appears in the output")
	}
	srv.SetNodeOnline("pve2", false)
	out, _, code = runDoctor(t, srv, "PVE_ALLOWED_NODES", "pve1,pve2,pve9")
	if code != doctor.ExitProblems {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantLines(t, out, "[ok]   node pve1: member, online", "[FAIL] node pve2: offline",
		"[FAIL] node pve9: not a member of the cluster (members: pve1, pve2, pve3)")
}

func TestDoctorDemo(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"--demo", "doctor"}, func(string) (string, bool) { return "", false }, strings.NewReader(""), &stdout, &stderr)
	// The demo token holds the README's least-privilege role: doctor
	// passes (TestDoctorOverPrivileged keeps the administrator's case).
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	wantLines(t, stdout.String(), "[info] demo mode", "[ok]   TLS: trusted by the pinned fingerprint", "[ok]   node pve3: member, online")
}

func TestStartupWarnings(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/": {"Sys.Audit", "Permissions.Modify"}, "/vms": {"VM.Audit"}}))
	defer srv.Close()
	m := map[string]string{
		"PVE_URL": srv.URL, "PVE_API_TOKEN_ID": doctorToken, "PVE_API_TOKEN_SECRET": "d0c70000-0000-4000-8000-000000000000",
		"PVE_TLS_FINGERPRINT": srv.Fingerprint(), "PVE_ALLOWED_NODES": "pve1", "PROXMOX_SAFE_READ_ONLY": "true",
	}
	cfg, err := settings.Parse(nil, func(k string) (string, bool) { v, ok := m[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	a, err := setup(cfg, logger, logger, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	startupWarnings(t.Context(), a, logger)
	wantLines(t, logs.String(), "the API token lacks privileges", "path=/storage", "privileges=Datastore.Audit",
		"holds a dangerous privilege", "privilege=Permissions.Modify")

	// Proxmox too slow (the check's own time limit passed): one warning,
	// no failure.
	logs.Reset()
	ctx, cancel := context.WithTimeout(t.Context(), -time.Second)
	defer cancel()
	startupWarnings(ctx, a, logger)
	wantLines(t, logs.String(), "startup privilege check did not complete; the server runs anyway")

	// Cancelled because the server is stopping: nothing to warn about
	// (every prompt exit logged that the check "did not complete").
	logs.Reset()
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	startupWarnings(ctx, a, logger)
	if logs.Len() != 0 {
		t.Errorf("a check cancelled by the server's exit logged:\n%s", logs.String())
	}

	// The background wrapper returns at once; stop ends it.
	stop, done := startupCheck(t.Context(), a, cfg, logger)
	stop()
	<-done
}

// TestStartupCheckStopDoesNotWait: stopping the background privilege
// check (the server is exiting) returns while the check is still running,
// instead of waiting for it (a TLS handshake in progress made every prompt
// exit slower); the check's context is cancelled. In a synctest
// bubble: if stop waited, every goroutine would be blocked and synctest
// would report the deadlock. Not parallel: it sets the check's hooks.
func TestStartupCheckStopDoesNotWait(t *testing.T) {
	defer func(run func(context.Context, *app, *slog.Logger)) { startupCheckRun = run }(startupCheckRun)
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var sawCancel bool
		startupCheckRun = func(ctx context.Context, _ *app, _ *slog.Logger) {
			close(entered)
			<-release // busy (a handshake), not looking at ctx
			sawCancel = ctx.Err() != nil
		}
		a := &app{called: make(chan struct{})}
		stop, done := startupCheck(t.Context(), a, &settings.Config{}, slog.New(slog.DiscardHandler))
		close(a.called) // the first tools/call arrived
		<-entered
		stop() // must return while the check is still running
		close(release)
		<-done
		if !sawCancel {
			t.Error("the check's context was not cancelled by stop")
		}
	})
}

// TestStartupCheckWaitsForFirstCall: the privilege check begins when the
// first tools/call arrives and on nothing else: a session that lists the
// tools and idles for an hour never starts it; the first call starts it
// and is answered while the check is still running (it never waits for
// it); a server stopped before any call never runs it. Virtual time
// (synctest): no real waiting, no timing assertion. Not parallel: it sets
// the check's hooks.
func TestStartupCheckWaitsForFirstCall(t *testing.T) {
	defer func(run func(context.Context, *app, *slog.Logger)) { startupCheckRun = run }(startupCheckRun)
	synctest.Test(t, func(t *testing.T) {
		// ran is atomic: the race detector does not see virtual time
		// advancing as ordering the test's reads before the check's write.
		var ran atomic.Int32
		release := make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		startupCheckRun = func(context.Context, *app, *slog.Logger) {
			ran.Add(1)
			<-release // still running while the call is answered
		}
		a := &app{called: make(chan struct{})}
		stop, done := startupCheck(t.Context(), a, &settings.Config{}, slog.New(slog.DiscardHandler))
		defer func() { releaseOnce(); stop(); <-done }()
		srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
		var calls, ranDuringFirstCall atomic.Int32
		mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			if calls.Add(1) == 1 {
				synctest.Wait() // the check, begun with the call's arrival, is under way
				ranDuringFirstCall.Store(ran.Load())
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
		a.watchFirstCall(srv)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := newClient().Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := ran.Load(); n != 0 {
			t.Fatal("the check began without a tool call")
		}
		for range 2 {
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"}); err != nil || res.IsError {
				t.Fatalf("call: %v %v", err, res)
			}
		}
		synctest.Wait()
		if n := ran.Load(); n != 1 {
			t.Fatalf("the check ran %d times after two calls, want once", n)
		}
		if ranDuringFirstCall.Load() != 1 {
			t.Error("the check had not begun while the first call was handled")
		}
		releaseOnce()

		// Stopped before any call: never started.
		b := &app{called: make(chan struct{})}
		stop2, done2 := startupCheck(t.Context(), b, &settings.Config{}, slog.New(slog.DiscardHandler))
		stop2()
		<-done2
		if n := ran.Load(); n != 1 {
			t.Error("a check stopped before any call ran")
		}
	})
}

// TestDoctorEchoingProxy is TestUpstreamEchoNeverLeaksTheSecret for
// doctor: a proxy that repeats
// the Authorization header in its errors must not put the secret on a
// doctor line.
func TestDoctorEchoingProxy(t *testing.T) {
	t.Parallel()
	const secret = "d0c70000-0000-4000-8000-000000000000"
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()
	srv.InjectFault(proxmoxtest.Fault{Path: "/cluster/*", Status: 502, Reason: "proxy echo {{auth}}", Echo: true})
	srv.InjectFault(proxmoxtest.Fault{Path: "/nodes*", Status: 400, Echo: true})
	srv.InjectFault(proxmoxtest.Fault{Path: "/access/*", Status: 500, Body: []byte(`{"data":null,"message":"{{auth}}"}`), Echo: true})
	out, errOut, code := runDoctor(t, srv)
	if code == 0 {
		t.Fatalf("doctor passed against a failing proxy:\n%s", out)
	}
	if strings.Contains(out+errOut, secret) || strings.Contains(out+errOut, "PVEAPIToken=automation") {
		t.Errorf("the secret appears in doctor's output:\n%s\n%s", out, errOut)
	}
	if !strings.Contains(out+errOut, "[redacted]") {
		t.Errorf("the echo never reached doctor's output (test exercises nothing):\n%s\n%s", out, errOut)
	}
}

// TestDoctorPolicy: doctor reports what the policy means, and fails when
// `serve` would refuse to start, instead of "everything checked is fine".
func TestDoctorPolicy(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	defer srv.Close()

	// Without allowed nodes no mutation tool is offered, so the token
	// needs only the read privileges.
	reader := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/": {"Sys.Audit", "VM.Audit", "Datastore.Audit"}, "/vms": {"VM.GuestAgent.Audit"}}))
	defer reader.Close()
	out, _, code := runDoctor(t, reader, "PVE_ALLOWED_NODES", "")
	wantLines(t, out, "[warn] policy: profile safe enables mutation classes power, snapshot, but PVE_ALLOWED_NODES is empty", "set PVE_ALLOWED_NODES=")
	if strings.Count(out, "[warn]") != 1 {
		t.Errorf("want exactly one warning for the empty allowlist:\n%s", out)
	}
	if code != exitOK {
		t.Errorf("empty allowlist: exit %d, want 0 (working, with a warning)\n%s", code, out)
	}

	out, _, code = runDoctor(t, srv, "PROXMOX_SAFE_AUDIT_LOG", "")
	wantLines(t, out, "[FAIL] configuration: `serve` (and `call`) would refuse to start: PROXMOX_SAFE_AUDIT_LOG")
	if code != doctor.ExitProblems {
		t.Errorf("no audit log: exit %d, want %d\n%s", code, doctor.ExitProblems, out)
	}

	out, _, code = runDoctor(t, srv, "PROXMOX_SAFE_PROFILE", "readonly", "PROXMOX_SAFE_AUDIT_LOG", "")
	wantLines(t, out, "[info] policy: profile readonly enables no mutation class")
	if code != exitOK || strings.Contains(out, "FAIL") {
		t.Errorf("readonly: exit %d\n%s", code, out)
	}

	_, errOut, code := runDoctor(t, srv, "PROXMOX_SAFE_PROFILE", "yolo")
	if code != exitUsage || !strings.Contains(errOut, "PROXMOX_SAFE_PROFILE") || !strings.Contains(errOut, `unknown profile "yolo"`) {
		t.Errorf("unknown profile: exit %d, stderr %q", code, errOut)
	}
}

// TestDoctorJSON: `doctor --json` is one JSON document with every check
// and the exit code it returns.
func TestDoctorJSON(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/": proxmoxtest.AllPrivileges()}))
	defer srv.Close()
	m := map[string]string{
		"PVE_URL": srv.URL, "PVE_API_TOKEN_ID": doctorToken, "PVE_API_TOKEN_SECRET": "d0c70000-0000-4000-8000-000000000000",
		"PVE_TLS_FINGERPRINT": srv.Fingerprint(), "PVE_ALLOWED_NODES": "pve1", "PROXMOX_SAFE_READ_ONLY": "1",
	}
	out, errOut, code := runIn(t, m, "doctor", "--json")
	var rep struct {
		Checks []struct {
			Status  string   `json:"status"`
			Message string   `json:"message"`
			Details []string `json:"details"`
		} `json:"checks"`
		Warnings  int    `json:"warnings"`
		Dangerous bool   `json:"dangerous"`
		Result    string `json:"result"`
		ExitCode  int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s\n%s", err, out, errOut)
	}
	if code != doctor.ExitDangerous || rep.ExitCode != code || !rep.Dangerous || rep.Warnings == 0 {
		t.Errorf("exit %d, report %+v", code, rep)
	}
	statuses := map[string]int{}
	for _, c := range rep.Checks {
		statuses[c.Status]++
		if c.Status == "warn" && strings.Contains(c.Message, "Permissions.Modify") && len(rep.Checks) > 0 {
			statuses["permissions.modify"]++
		}
	}
	if statuses["ok"] < 4 || statuses["permissions.modify"] != 1 || statuses["fail"] != 0 {
		t.Errorf("checks by status %v:\n%s", statuses, out)
	}
	if strings.Contains(out, "[ok]") || strings.Contains(out, "Result:") {
		t.Errorf("text report mixed into the JSON:\n%s", out)
	}
}

// TestReadmeRole: the README's quick start creates the role doctor and
// permissions_check name, with exactly the privileges the demo token
// holds (so `--demo doctor` models the recommended setup).
func TestReadmeRole(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	m := regexp.MustCompile(`pveum role add (\S+) --privs "([^"]+)"`).FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README has no `pveum role add NAME --privs \"…\"`")
	}
	if m[1] != proxmoxsafe.RoleName {
		t.Errorf("README role %q, doctor and permissions_check say %q", m[1], proxmoxsafe.RoleName)
	}
	privs := strings.Fields(m[2])
	slices.Sort(privs)
	want := slices.Sorted(slices.Values(demo.ReadmeRolePrivileges))
	if !slices.Equal(privs, want) {
		t.Errorf("README role privileges %v, demo token %v", privs, want)
	}
	if strings.Contains(readme, "MCPOperator") {
		t.Error("README still names the role MCPOperator")
	}
}

// The admin profile's privileges: the safe profile's role covers rollback
// and delete (VM.Snapshot) and suspend (VM.PowerMgmt); destroying a guest
// needs VM.Allocate, provision the allocation and config privileges and
// SDN.Use on bridges, and the config class the VM.Config privileges of
// the keys it sets and VM.Config.Disk (which also serves the
// hibernation): the safe profile's role holds none of them.
func TestDoctorAdminProfile(t *testing.T) {
	t.Parallel()
	privs := wellScopedPrivileges()
	privs["/vms"] = append(privs["/vms"], "VM.Migrate") // guest_migrate
	srv0 := proxmoxtest.NewServer(doctorCluster(privs))
	defer srv0.Close()
	out, _, code := runDoctor(t, srv0, "PROXMOX_SAFE_PROFILE", "admin")
	if code == 0 {
		t.Fatalf("exit 0 without VM.Allocate and the config privileges\n%s", out)
	}
	for _, want := range []string{"[FAIL] privileges:", "VM.Clone", "VM.Allocate", "VM.Config.Disk", "VM.Config.CPU", "VM.Config.Memory", "VM.Config.Options",
		"guest_clone", "vm_create", "container_create", "guest_destroy", "disk_resize", "guest_config_set"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q\n%s", want, out)
		}
	}
	privs["/vms"] = append(privs["/vms"], "VM.Allocate", "VM.Clone", "VM.Config.Disk", "VM.Config.CPU", "VM.Config.Memory", "VM.Config.Network", "VM.Config.HWType", "VM.Config.Options")
	privs["/sdn/zones"] = []string{"SDN.Use"}
	srv := proxmoxtest.NewServer(doctorCluster(privs))
	defer srv.Close()
	out, _, code = runDoctor(t, srv, "PROXMOX_SAFE_PROFILE", "admin")
	if code != 0 || strings.Contains(out, "[FAIL]") {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	wantLines(t, out, "mutation classes power, snapshot, snapshot-admin, power-extra, provision, destroy, migrate, config")
	srv2 := proxmoxtest.NewServer(doctorCluster(map[string][]string{"/": {"Sys.Audit"}, "/vms": {"VM.Audit"}, "/storage": {"Datastore.Audit"}}))
	defer srv2.Close()
	out, _, _ = runDoctor(t, srv2, "PROXMOX_SAFE_PROFILE", "admin")
	wantLines(t, out, "guest_suspend", "guest_resume", "snapshot_rollback", "snapshot_delete", "guest_destroy", "guest_clone", "vm_create", "container_create", "VM.Migrate", "guest_migrate", "disk_resize", "guest_config_set")
}

// TestIdleServerMakesNoRequest: the built binary, initialized and with
// its tools listed, then idle, sends nothing to Proxmox (the fake's request
// log stays empty, for one cluster and for each of a clusters file's); one
// tool call then brings the privilege check's requests and its warnings,
// for every cluster of a clusters file. The idle second is longer than
// the check's old start (250 ms after the list, else 1 s after the start),
// so this fails when the check runs on a timer. Over real pipes.
func TestIdleServerMakesNoRequest(t *testing.T) {
	t.Parallel()
	const idle = 1500 * time.Millisecond
	t.Run("one cluster", func(t *testing.T) {
		t.Parallel()
		fake, envMap := fakeEnv(t, "PVE_ALLOWED_NODES", "pve1", "PROXMOX_SAFE_READ_ONLY", "true")
		p := startListed(t, cleanEnv(envList(envMap)...))
		time.Sleep(idle)
		if r := fake.Requests(); len(r) != 0 {
			t.Fatalf("an idle server sent %d requests to Proxmox, first %s %s", len(r), r[0].Method, r[0].Path)
		}
		if res := call(t, p.cs, "list_guests", map[string]any{}); res.IsError {
			t.Fatalf("list_guests: %s", textOf(res))
		}
		waitFor(t, "the privilege check's warning", func() bool {
			return privilegesRead(fake) && strings.Contains(p.stderr.String(), "holds a dangerous privilege")
		})
	})
	t.Run("clusters file", func(t *testing.T) {
		t.Parallel()
		fakes := map[string]*proxmoxtest.Server{"lab": proxmoxtest.NewServer(nil), "prod": proxmoxtest.NewServer(nil)}
		for _, f := range fakes {
			t.Cleanup(f.Close)
		}
		_, env := clustersSetup(t, t.TempDir(), fakes, "lab", "prod")
		p := startListed(t, env)
		time.Sleep(idle)
		for name, f := range fakes {
			if r := f.Requests(); len(r) != 0 {
				t.Fatalf("an idle server sent %d requests to %s, first %s %s", len(r), name, r[0].Method, r[0].Path)
			}
		}
		if res := call(t, p.cs, "list_guests", map[string]any{"cluster": "lab"}); res.IsError {
			t.Fatalf("list_guests: %s", textOf(res))
		}
		waitFor(t, "each cluster's privilege check", func() bool {
			s := p.stderr.String()
			return privilegesRead(fakes["lab"]) && privilegesRead(fakes["prod"]) &&
				strings.Contains(s, "cluster=lab") && strings.Contains(s, "cluster=prod") && strings.Count(s, "holds a dangerous privilege") >= 2
		})
	})
}

// privilegesRead reports whether f was asked for the token's privileges,
// the privilege check's last request.
func privilegesRead(f *proxmoxtest.Server) bool {
	return slices.ContainsFunc(f.Requests(), func(r proxmoxtest.Request) bool { return r.Path == "/access/permissions" })
}

// waitFor polls done until it holds, failing after a minute (a hang guard,
// not a timing).
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for !done() {
		select {
		case <-ctx.Done():
			t.Fatalf("no %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestDoctorNamesEveryMissingSetting: doctor without Proxmox settings names
// the URL, the token id and the secret in one run, one line each (it used
// to name one per run); serve keeps its one line.
func TestDoctorNamesEveryMissingSetting(t *testing.T) {
	t.Parallel()
	_, errOut, code := runIn(t, map[string]string{}, "doctor")
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if code != exitUsage || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines, want 2 and 3:\n%s", code, len(lines), errOut)
	}
	for i, want := range []string{"PVE_URL (--url) is required", "PVE_API_TOKEN_ID (--token-id) is required", "PVE_API_TOKEN_SECRET or PVE_API_TOKEN_SECRET_FILE"} {
		if !strings.HasPrefix(lines[i], "proxmox-safe-mcp: "+want) {
			t.Errorf("line %d %q, want %q", i, lines[i], want)
		}
	}
	_, errOut, _ = runIn(t, map[string]string{"PVE_URL": "http://pve:8006"}, "doctor")
	if !strings.Contains(errOut, "plain http://") || !strings.Contains(errOut, "PVE_API_TOKEN_ID") {
		t.Errorf("a bad URL and a missing token: %s", errOut)
	}
	if _, errOut, _ := runIn(t, map[string]string{}); strings.Count(errOut, "\n") != 1 {
		t.Errorf("serve: %q, want one line", errOut)
	}
}
