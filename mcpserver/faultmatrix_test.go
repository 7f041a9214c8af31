package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/rowgroup"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// The fault matrix at the MCP boundary (docs/SECURITY.md "Upstream fault
// matrix"): what a model reads when Proxmox misbehaves must be true. A
// representative subset of the library's rows
// (proxmoxsafe/faultmatrix_test.go), seen as the tool result a model reads
// through an in-memory go-sdk client. Each row checks that the
// result is a tool error (or, for a wait, an honest outcome) naming what
// failed, that the call returns within its configured bound, that no
// goroutine is left once the session closes, that the canary appears in
// no result, log line or audit record, and that a refused mutation sent
// no mutating request.
//
// The matrix tests do not run in parallel with other tests, so their leak
// checks see only their own goroutines. Rows that end quickly run one after
// another, goleak.VerifyNone after each; rows that wait for a bound (about
// a second each) wait side by side in a rowgroup.Group, one at a time
// setting up and sending the requests before its fault (faultRowsWorking).
// The group checks each row's goroutines by a pprof label and runs goleak
// once after them all.

// faultCanary is the token secret in these tests.
const faultCanary = "PVESECRET-CANARY-mcp-0b1d-4e55-9a3b-2c4d5e6f7a8b"

// faultTimeout is the configured per-request bound: short, yet long
// enough for a healthy request under -race on a loaded machine.
const faultTimeout = time.Second

// faultRowsWorking is how many rows that wait for a bound may work at once
// (set up and send the healthy requests before the fault): one, as when
// they ran one after another; see matrixRowsWorking in
// proxmoxsafe/faultmatrix_test.go.
const faultRowsWorking = 1

// faultFixture is one row's world.
type faultFixture struct {
	fake  *proxmoxtest.Server
	other *proxmoxtest.Server // a second server: a redirect target, a wrong pin
	*fixture
	// dialer opens and counts the client's connections; once the
	// upstream is down they are refused.
	dialer *testutil.Dialer
}

// takeDown makes the upstream refuse connections: later connections go to
// a port held by a socket that never listens, and the fake is closed. Only
// closing the fake is not enough: on a busy machine another listener may
// take its freed port, and the request meant to be refused reaches it.
func (f *faultFixture) takeDown() {
	f.dialer.TakeDown()
	f.fake.Close()
}

// inject applies a row's fault, noting the connections opened so far.
func (f *faultFixture) inject(fault func(*faultFixture, string, string), method, path string) {
	f.dialer.MarkFault()
	fault(f, method, path)
}

// faultReached reports whether the faulted request went out: the fake
// logged it (a fault on a path), or the client opened a connection after
// the fault was injected (a fault below HTTP: nothing is logged).
func (f *faultFixture) faultReached(method, path string) bool {
	if f.dialer.DialedSinceFault() {
		return true
	}
	for _, r := range f.fake.Requests() {
		if r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

// newFaultFixture starts the fake (its tasks answer "running" to
// taskPolls polls; 0 means the fake's default), the library client with
// the short bound, our server and a client session. mod may change the
// config.
func newFaultFixture(t *testing.T, ctx context.Context, taskPolls int, mod func(*proxmoxsafe.Config, *faultFixture)) *faultFixture {
	t.Helper()
	cluster := proxmoxtest.DemoCluster()
	cluster.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {
		Secret: faultCanary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}}}
	f := &faultFixture{fixture: &fixture{audit: newMemAudit(), logs: &syncBuffer{}}, dialer: testutil.NewDialer(t)}
	f.fake = proxmoxtest.NewUnstartedServer(cluster)
	f.fake.TaskPolls = taskPolls
	f.fake.StartTLS()
	t.Cleanup(f.fake.Close)
	f.other = proxmoxtest.NewServer(nil)
	t.Cleanup(f.other.Close)
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := proxmoxsafe.Config{
		URL:         f.fake.URL,
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: faultCanary,
		Fingerprint: f.fake.Fingerprint(),
		Policy:      defaultPolicy(),
		Audit:       f.audit,
		Logger:      logger,
		Timeout:     faultTimeout,
		// A new connection per request: a fault below HTTP switched on
		// between two requests meets the next one.
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: f.dialer.DialContext}},
	}
	if mod != nil {
		mod(&cfg, f)
	}
	c, err := proxmoxsafe.New(cfg)
	if err != nil {
		t.Fatalf("proxmoxsafe.New: %v", err)
	}
	f.client = c
	t.Cleanup(c.CloseIdleConnections)
	f.server = New(c, &Options{Logger: logger})
	f.cs = connect(t, ctx, f.server, "")
	return f
}

// pathFault injects f for method and path.
func pathFault(f proxmoxtest.Fault) func(*faultFixture, string, string) {
	return func(x *faultFixture, method, path string) {
		f := f // a copy: rows may run at once
		f.Method, f.Path = method, path
		x.fake.InjectFault(f)
	}
}

func TestFaultMatrixTools(t *testing.T) {
	// Not parallel: see above.
	const (
		read    = "/nodes/pve1/status"
		preRead = "/nodes/pve1/qemu/100/status/current"
		post    = "/nodes/pve1/qemu/100/status/shutdown"
	)
	shutdown := powerArgs("pve1", "qemu", 100, "shutdown", nil)
	rows := []struct {
		name   string
		tool   string
		args   map[string]any
		method string
		path   string
		inject func(f *faultFixture, method, path string)
		mod    func(*proxmoxsafe.Config, *faultFixture)
		// want are fragments of the tool error text.
		want []string
		// refused: a mutation refused before its POST (zero mutating
		// requests, a refused audit record); failed: the POST went out
		// and failed (a failed audit record).
		refused, failed bool
		// waits: the row ends when the request bound (faultTimeout)
		// expires, so it runs side by side with the other waiting rows.
		waits bool
	}{
		{name: "upstream down/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: func(f *faultFixture, _, _ string) { f.takeDown() },
			want:   []string{"GET /nodes/pve1/status", "connection refused"}},
		{name: "slow headers/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read, waits: true,
			inject: pathFault(proxmoxtest.Fault{Latency: time.Hour}),
			want:   []string{"GET /nodes/pve1/status", "no answer within", "timed out waiting for the answer's headers"}},
		{name: "endless body/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: pathFault(proxmoxtest.Fault{Endless: true}),
			mod: func(c *proxmoxsafe.Config, _ *faultFixture) {
				c.MaxResponseBytes = 1 << 20
				c.Timeout = 10 * time.Second // the limit, not the clock, must end it
			},
			want: []string{"GET /nodes/pve1/status", "response body too large"}},
		{name: "HTML error page/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: pathFault(proxmoxtest.Fault{Status: 502, Echo: true, Body: []byte("<html><pre>{{auth}}</pre></html>"),
				Header: http.Header{"Content-Type": {"text/html"}}}),
			want: []string{"GET /nodes/pve1/status", "502 Bad Gateway"}},
		{name: "401/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: pathFault(proxmoxtest.Fault{Status: 401, Reason: "authentication failure {{auth}}", Echo: true}),
			want:   []string{"GET /nodes/pve1/status", "401", "token was rejected", "no action was taken"}},
		{name: "595/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: pathFault(proxmoxtest.Fault{Status: 595, Reason: "No route to host"}),
			want:   []string{"595", "offline or unreachable"}},
		{name: "malformed JSON/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: pathFault(proxmoxtest.Fault{Status: 200, Body: []byte(`{"data":{"cpu":`)}),
			want:   []string{"GET /nodes/pve1/status", "malformed response"}},
		{name: "redirect/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: func(f *faultFixture, method, path string) {
				pathFault(proxmoxtest.Fault{Status: 302, Header: http.Header{"Location": {f.other.URL + "/api2/json" + path}}})(f, method, path)
			},
			want: []string{"GET /nodes/pve1/status", "refusing to follow a redirect"}},
		{name: "wrong pin/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read,
			inject: func(*faultFixture, string, string) {},
			mod:    func(c *proxmoxsafe.Config, f *faultFixture) { c.Fingerprint = f.other.Fingerprint() },
			want:   []string{"does not match the configured pin"}},
		{name: "TLS handshake never completes/read", tool: ToolNodeStatus, args: map[string]any{"node": "pve1"}, method: "GET", path: read, waits: true,
			inject: func(f *faultFixture, _, _ string) { f.fake.StallHandshakes(true) },
			want:   []string{"GET /nodes/pve1/status", "timed out in the TLS handshake"}},

		{name: "slow headers/pre-read", tool: ToolGuestPower, args: shutdown, method: "GET", path: preRead, refused: true, waits: true,
			inject: pathFault(proxmoxtest.Fault{Latency: time.Hour}),
			want:   []string{"cannot check the guest's current state", "GET " + preRead, "timed out waiting for the answer's headers", "no action was taken"}},
		{name: "connection dropped/pre-read", tool: ToolGuestPower, args: shutdown, method: "GET", path: preRead, refused: true,
			inject: pathFault(proxmoxtest.Fault{Drop: true}),
			want:   []string{"cannot check the guest's current state", "GET " + preRead, "no action was taken"}},
		{name: "500 echoing the token/pre-read", tool: ToolGuestPower, args: shutdown, method: "GET", path: preRead, refused: true,
			inject: pathFault(proxmoxtest.Fault{Status: 500, Reason: "backend said {{auth}}", Echo: true}),
			want:   []string{"cannot check the guest's current state", "500", "[redacted]", "no action was taken"}},
		{name: "certificate rotated mid-run/pre-read", tool: ToolGuestPower, args: shutdown, method: "GET", path: preRead, refused: true,
			inject: func(f *faultFixture, _, _ string) { f.fake.RotateCertificate() },
			want:   []string{"cannot check the guest's current state", "does not match the configured pin", "no action was taken"}},
		{name: "slow headers/POST", tool: ToolGuestPower, args: shutdown, method: "POST", path: post, failed: true, waits: true,
			inject: pathFault(proxmoxtest.Fault{Latency: time.Hour}),
			want:   []string{"POST " + post, "timed out waiting for the answer's headers", "may have reached Proxmox", "check the guest's tasks and state"}},
		{name: "connection dropped/POST", tool: ToolGuestPower, args: shutdown, method: "POST", path: post, failed: true,
			inject: pathFault(proxmoxtest.Fault{Drop: true}),
			want:   []string{"POST " + post, "may have reached Proxmox", "check the guest's tasks and state"}},
		{name: "redirect/POST", tool: ToolGuestPower, args: shutdown, method: "POST", path: post, failed: true,
			inject: func(f *faultFixture, method, path string) {
				pathFault(proxmoxtest.Fault{Status: 307, Header: http.Header{"Location": {f.other.URL + "/api2/json" + path}}})(f, method, path)
			},
			want: []string{"POST " + post, "refusing to follow a redirect"}},
		{name: "501/POST", tool: ToolGuestPower, args: shutdown, method: "POST", path: post, failed: true,
			inject: pathFault(proxmoxtest.Fault{Status: 501, Reason: "Method 'POST " + post + "' not implemented"}),
			want:   []string{"501", "not implemented"}},
	}
	// call runs row i; it is a subtest of the row, so its cleanups end the
	// session before the row's leak check. A row of the group (slot not
	// nil) tells the group when its faulted request has gone out.
	call := func(i int, slot *rowgroup.Row) func(t *testing.T) {
		row := rows[i]
		return func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			f := newFaultFixture(t, ctx, 0, row.mod)
			stopWatching := func() {}
			if slot != nil {
				stopWatching = slot.WaitingWhen(func() bool { return f.faultReached(row.method, row.path) })
				defer stopWatching()
			}
			f.inject(row.inject, row.method, row.path)
			res := f.call(t, ctx, row.tool, row.args)
			if slot != nil {
				stopWatching()
				slot.Working() // the checks and cleanups below, one row at a time
			}
			if ctx.Err() != nil {
				t.Fatal("the call returned only at the test's deadline: the configured bound did not apply")
			}
			msg := wantError(t, res, row.want...)
			t.Log(msg)
			// The object says what the words say: nothing was done unless
			// the mutating request went out.
			if taken, want := errorOf(t, res).Error.ActionTaken, map[bool]string{false: "none", true: "unknown"}[row.failed]; taken != want {
				t.Errorf("action_taken = %q, want %q", taken, want)
			}
			checkFaultOutputs(t, f, mustJSON(t, res))
			if got := f.other.Requests(); len(got) != 0 {
				t.Errorf("the other server (redirect target) got requests: %v", requestLines(got))
			}
			mut := f.fake.MutatingRequests()
			switch {
			case row.refused:
				if len(mut) != 0 {
					t.Errorf("mutating requests after a refusal: %v", requestLines(mut))
				}
				auditEvent(t, f.audit, proxmoxsafe.AuditRefused, "cannot check the guest's current state")
			case row.failed:
				if len(mut) != 1 {
					t.Errorf("mutating requests = %v, want the one POST", requestLines(mut))
				}
				if strings.Contains(msg, "no action was taken") {
					t.Errorf("a POST that went out claims nothing was done: %q", msg)
				}
				auditEvent(t, f.audit, proxmoxsafe.AuditFailed, "POST "+post)
			default:
				if len(mut) != 0 {
					t.Errorf("a read sent mutating requests: %v", requestLines(mut))
				}
			}
		}
	}
	var waiting []int // the rows that wait, run side by side after the others
	for i, row := range rows {
		if row.waits {
			waiting = append(waiting, i)
			continue
		}
		t.Run(row.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			t.Run("call", call(i, nil))
			goleak.VerifyNone(t, before)
		})
	}
	g := rowgroup.New(t, faultRowsWorking)
	for _, i := range waiting {
		g.Run(rows[i].name, func(t *testing.T, slot *rowgroup.Row) { t.Run("call", call(i, slot)) })
	}
	g.Wait()
}

// TestFaultMatrixWaitTools covers the task rows through guest_power with
// wait: a task that never ends, and a task-status endpoint that hangs
// (past the per-request bound, or past the wait itself).
func TestFaultMatrixWaitTools(t *testing.T) {
	// Not parallel, and every row waits a second or more: side by side,
	// see above.
	rows := []struct {
		name string
		hang bool
		// pastWait: the per-request bound (5 s) is above the wait (1 s).
		pastWait bool
		want     []string
		status   proxmoxsafe.OutcomeStatus
	}{
		{name: "task-status endpoint hangs", hang: true, status: proxmoxsafe.OutcomeSubmitted,
			want: []string{"Submitted shutdown", "The outcome could not be confirmed", "timed out waiting for the answer's headers", "check the task and the guest's status"}},
		{name: "task-status endpoint hangs past the wait", hang: true, pastWait: true, status: proxmoxsafe.OutcomeTimeout,
			want: []string{"the task's status could not be read within 1 s", "it may still be running", "check task UPID:pve1:"}},
		// Last: it polls until its wait ends, each poll a new TLS
		// connection, so it keeps its slot (see below) and works while the
		// rows above only wait.
		{name: "task that never ends", status: proxmoxsafe.OutcomeTimeout,
			want: []string{"still running after 1 s", "check task UPID:pve1:", "later"}},
	}
	g := rowgroup.New(t, faultRowsWorking)
	for _, row := range rows {
		g.Run(row.name, func(t *testing.T, slot *rowgroup.Row) {
			t.Run("call", func(t *testing.T) { // its cleanups end the session before the leak check
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				var mod func(*proxmoxsafe.Config, *faultFixture)
				if row.pastWait {
					mod = func(c *proxmoxsafe.Config, _ *faultFixture) { c.Timeout = 5 * time.Second }
				}
				f := newFaultFixture(t, ctx, 1_000_000, mod) // a task runs for as long as anyone polls
				stopWatching := func() {}
				if row.hang {
					f.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Latency: time.Hour})
					// Once the task's status is asked for, the row only waits.
					stopWatching = slot.WaitingWhen(func() bool {
						for _, r := range f.fake.Requests() {
							if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/nodes/pve1/tasks/") {
								return true
							}
						}
						return false
					})
					defer stopWatching()
				}
				secs := 1
				if row.hang && !row.pastWait {
					secs = 3 // the request bound ends the poll first
				}
				res := f.call(t, ctx, ToolGuestPower, powerArgs("pve1", "qemu", 100, "shutdown", map[string]any{"wait": true, "timeout_seconds": secs}))
				stopWatching() // first: a watcher still running could give the slot up again
				slot.Working() // the checks and cleanups below, one row at a time
				if ctx.Err() != nil {
					t.Fatal("the call returned only at the test's deadline")
				}
				msg := text(t, res)
				t.Log(msg)
				for _, w := range row.want {
					if !strings.Contains(msg, w) {
						t.Errorf("result %q does not say %q", msg, w)
					}
				}
				if r := receiptOf(t, res); r.Outcome == nil || r.Outcome.Status != row.status {
					t.Errorf("outcome = %+v, want status %q", r.Outcome, row.status)
				} else if row.hang && r.Outcome.TaskPolls != 0 {
					// The status endpoint never answers: a poll that
					// counted read an answer the fake must not have sent.
					t.Errorf("task polls = %d, want 0: a status poll was answered although the endpoint hangs", r.Outcome.TaskPolls)
				}
				if m := f.fake.MutatingRequests(); len(m) != 1 {
					t.Errorf("mutating requests = %v, want the one shutdown", requestLines(m))
				}
				checkFaultOutputs(t, f, mustJSON(t, res))
			})
		})
	}
	g.Wait()
}

// checkFaultOutputs looks for the canary and an unredacted token header in
// the result, the logs and the audit log.
func checkFaultOutputs(t *testing.T, f *faultFixture, result string) {
	t.Helper()
	for what, s := range map[string]string{"result": result, "logs": f.logs.String(), "audit log": f.audit.String()} {
		if strings.Contains(s, faultCanary) || strings.Contains(s, "PVEAPIToken="+proxmoxtest.DefaultTokenID) {
			t.Errorf("the token secret appears in the %s:\n%s", what, s)
		}
	}
}

// auditEvent checks for a record of ev whose reason contains reason.
func auditEvent(t *testing.T, a *memAudit, ev proxmoxsafe.AuditEvent, reason string) {
	t.Helper()
	for _, r := range a.records(t) {
		if r.Event == ev && strings.Contains(r.Reason, reason) {
			return
		}
	}
	t.Errorf("no %q audit record with reason %q:\n%s", ev, reason, a.String())
}
