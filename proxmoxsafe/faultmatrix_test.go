package proxmoxsafe_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/rowgroup"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// The fault matrix (docs/SECURITY.md "Upstream fault matrix"):
// every way the campaign broke the upstream by hand, as a repeatable test.
// For each fault, on a read, on the state read that precedes a mutation,
// and on the mutation's POST, the call must
//   - return an error that names what failed (method, path and cause),
//   - return within its configured bound (matrixTimeout), long before the
//     test's own deadline,
//   - leave no goroutine behind (checked after each row),
//   - carry no secret (the canary) in the error, result, logs or audit,
//   - send no mutating request when the mutation was refused, and write the
//     audit record that says what happened (refused, or failed after the
//     POST).
//
// The matrix tests do not run in parallel with other tests, so their leak
// checks see only their own goroutines. Rows that end quickly run one after
// another, goleak.VerifyNone after each. Rows that wait for the request
// bound (matrixTimeout) would add up to a second each that way: they wait
// side by side in a rowgroup.Group, though only one at a time sets up and
// sends the healthy requests before its fault (matrixRowsWorking). The
// group checks each row's goroutines by a pprof label and runs goleak once
// after them all.

// matrixTimeout is the per-request bound configured in the matrix: short,
// so a fault that would hang a default client (30 s) ends quickly, yet
// long enough for a healthy request (a new TLS connection each time)
// under -race on a loaded 2-core machine.
const matrixTimeout = time.Second

// matrixRowsWorking is how many rows that wait for a bound may work at
// once: set up their fakes and client and send the healthy requests that
// precede the fault, each under the 1 s bound. One, as when the rows ran
// one after another: a row that reached its fault only waits, and the next
// one starts (rowgroup.Row.Waiting). With the bound cut to 300 ms, under
// -race and CPU hogs on 2 cores, the nine rows all working at once missed
// it in half the rows; one at a time, about as rarely as rows one after
// another (docs/PERFORMANCE.md, "The test suite").
const matrixRowsWorking = 1

// matrixDeadline is the test's own bound on one call: reaching it means
// the configured bound did not apply (a hang).
const matrixDeadline = 20 * time.Second

// faultRow is one row of the matrix.
type faultRow struct {
	name string
	// inject applies the fault to requests for method and path (path
	// faults), or to the whole server (connection-level faults ignore
	// method and path). It runs before the call, or for the POST mode
	// inside the approver, after the state read.
	inject func(e *matrixEnv, method, path string)
	// mod adjusts the client config (a wrong pin, a smaller body limit).
	mod func(c *proxmoxsafe.Config, e *matrixEnv)
	// kind is the sentinel the error must match.
	kind error
	// want are substrings the error text must contain: what failed.
	want []string
	// reaches reports whether the faulted request is logged by the fake
	// (false for faults below HTTP: nothing arrives).
	reaches bool
	// unsettled marks a fault that leaves a POST's effect unknown: the
	// request went out and no usable answer came back. The error must say
	// so (and must not for the others).
	unsettled bool
	// postOnly marks a fault that only makes sense for the mutation's POST.
	postOnly bool
	// configOnly marks a fault present from the start (a wrong pin): it
	// has no POST mode, the state read always meets it first.
	configOnly bool
}

// matrixEnv is one row's world: the fake, a second fake as a redirect
// target, and the client under test.
type matrixEnv struct {
	*env
	target *proxmoxtest.Server
	// dialer opens and counts the client's connections (oneShot rows);
	// once the upstream is down they are refused.
	dialer *testutil.Dialer
}

// takeDown makes the upstream refuse connections: later connections go to
// a port held by a socket that never listens, and the fake is closed. Only
// closing the fake is not enough: on a busy machine another listener may
// take its freed port, and the request meant to be refused reaches it.
func (e *matrixEnv) takeDown() {
	e.dialer.TakeDown()
	e.fake.Close()
}

// faultReached reports whether the faulted request went out: the fake
// logged it (a fault on a path), or the client opened a connection after
// the fault was injected (a fault below HTTP: nothing is logged).
func (e *matrixEnv) faultReached(method, path string) bool {
	return e.dialer.DialedSinceFault() || loggedRequest(e.fake, method, path)
}

// echoed is a proxy's error text that repeats the request's credentials.
const echoed = "upstream said {{auth}}"

func statusRow(name string, status int, reason string, kind error, want ...string) faultRow {
	return faultRow{name: name, kind: kind, want: want, reaches: true,
		inject: func(e *matrixEnv, method, path string) {
			e.fake.InjectFault(proxmoxtest.Fault{Method: method, Path: path, Status: status, Reason: reason,
				Echo: strings.Contains(reason, "{{auth}}")})
		}}
}

// oneShot makes every request use a new connection, so a fault below HTTP
// (a server gone, a new certificate, a stalled handshake) switched on
// between two requests meets the next one, not a kept-alive connection.
func oneShot(c *proxmoxsafe.Config, e *matrixEnv) {
	c.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: e.dialer.DialContext}}
}

func faultMatrix() []faultRow {
	path := func(f proxmoxtest.Fault) func(e *matrixEnv, method, path string) {
		return func(e *matrixEnv, method, p string) {
			f := f // a copy: the rows of the three modes may run at once
			f.Method, f.Path = method, p
			e.fake.InjectFault(f)
		}
	}
	return []faultRow{
		{name: "upstream down", kind: proxmoxsafe.ErrUpstream, want: []string{"connection refused"}, mod: oneShot,
			inject: func(e *matrixEnv, _, _ string) { e.takeDown() }},
		{name: "slow headers", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"no answer within", "timed out waiting for the answer's headers"}, reaches: true,
			inject: path(proxmoxtest.Fault{Latency: time.Hour})},
		{name: "trickled body", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"no answer within", "timed out reading the answer's body"}, reaches: true,
			inject: path(proxmoxtest.Fault{Trickle: 50 * time.Millisecond})},
		{name: "endless body", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"response body too large", "over 1048576 bytes"}, reaches: true,
			inject: path(proxmoxtest.Fault{Endless: true}),
			mod: func(c *proxmoxsafe.Config, _ *matrixEnv) {
				c.MaxResponseBytes = 1 << 20
				c.Timeout = 10 * time.Second // the limit, not the clock, must end it
			}},
		{name: "gigantic body", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"response body too large", "over 16777216 bytes"}, reaches: true,
			inject: path(proxmoxtest.Fault{BodySize: 64 << 20}),
			mod:    func(c *proxmoxsafe.Config, _ *matrixEnv) { c.Timeout = 10 * time.Second }}, // the default limit, read in full
		{name: "HTML error page", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"502 Bad Gateway"}, reaches: true,
			inject: path(proxmoxtest.Fault{Status: 502, Echo: true, Body: []byte("<html><body><h1>502 Bad Gateway</h1><pre>{{auth}}</pre></body></html>"),
				Header: http.Header{"Content-Type": {"text/html"}}})},
		{name: "HTML page with 200", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"not a Proxmox API answer", "text/html"}, reaches: true,
			inject: path(proxmoxtest.Fault{Status: 200, Echo: true, Body: []byte("<html><body>Welcome to nginx! {{auth}}</body></html>"),
				Header: http.Header{"Content-Type": {"text/html"}}})},
		statusRow("401", 401, "authentication failure "+echoed, proxmoxsafe.ErrUnauthorized, "401", "token was rejected"),
		statusRow("403", 403, "Permission check failed (/vms/100, VM.Audit)", proxmoxsafe.ErrForbidden, "403", "lacks privilege VM.Audit on /vms/100"),
		statusRow("500", 500, echoed, proxmoxsafe.ErrUpstream, "500", "[redacted]"),
		statusRow("501", 501, "Method 'GET /x' not implemented", proxmoxsafe.ErrUpstream, "501", "not implemented"),
		statusRow("595", 595, "No route to host", proxmoxsafe.ErrUpstream, "595", "node is offline or unreachable"),
		statusRow("596", 596, "Broken pipe", proxmoxsafe.ErrUpstream, "596", "TLS or connection error"),
		{name: "malformed JSON", unsettled: true, kind: proxmoxsafe.ErrUpstream, want: []string{"malformed response"}, reaches: true,
			inject: path(proxmoxtest.Fault{Status: 200, Body: []byte(`{"data":{"status":`)})},
		{name: "success without a task id", kind: proxmoxsafe.ErrUpstream, want: []string{"not a valid UPID"}, reaches: true, unsettled: true, postOnly: true,
			inject: path(proxmoxtest.Fault{Status: 200, Body: []byte(`{"data":"OK"}`)})},
		{name: "redirect", kind: proxmoxsafe.ErrUpstream, want: []string{"refusing to follow a redirect"}, reaches: true,
			inject: func(e *matrixEnv, method, p string) {
				status := http.StatusFound
				if method == http.MethodPost {
					status = http.StatusTemporaryRedirect // keeps the method and body
				}
				e.fake.InjectFault(proxmoxtest.Fault{Method: method, Path: p, Status: status,
					Header: http.Header{"Location": {e.target.URL + "/api2/json" + p}}})
			}},
		{name: "certificate rotated mid-run", kind: proxmoxsafe.ErrUpstream, want: []string{"fingerprint", "does not match the configured pin"}, mod: oneShot,
			inject: func(e *matrixEnv, _, _ string) { e.fake.RotateCertificate() }},
		{name: "wrong pin", kind: proxmoxsafe.ErrUpstream, want: []string{"fingerprint", "does not match the configured pin"}, configOnly: true,
			inject: func(e *matrixEnv, _, _ string) {},
			mod:    func(c *proxmoxsafe.Config, e *matrixEnv) { c.Fingerprint = e.target.Fingerprint() }},
		{name: "TLS handshake never completes", kind: proxmoxsafe.ErrUpstream, want: []string{"no answer within", "timed out in the TLS handshake"}, mod: oneShot,
			inject: func(e *matrixEnv, _, _ string) { e.fake.StallHandshakes(true) }},
	}
}

// matrixModes are the three places a fault can hit.
var matrixModes = []struct {
	name string
	// method and path are where the fault is injected.
	method, path string
}{
	{"read", http.MethodGet, "/nodes/pve1/status"},
	{"pre-read", http.MethodGet, "/nodes/pve1/qemu/100/status/current"},
	{"POST", http.MethodPost, "/nodes/pve1/qemu/100/status/shutdown"},
}

// hookSink records like the sink it wraps and then, after the "approved"
// record, runs a hook: the POST mode injects its fault there, after every
// read of the pipeline and right before the mutating request.
type hookSink struct {
	proxmoxsafe.AuditSink
	hook func()
}

func (h hookSink) Record(ctx context.Context, rec proxmoxsafe.AuditRecord) error {
	err := h.AuditSink.Record(ctx, rec)
	if rec.Event == proxmoxsafe.AuditApproved {
		h.hook()
	}
	return err
}

// waitsForBound reports whether the row ends only when the request bound
// (matrixTimeout) expires.
func (r faultRow) waitsForBound() bool { return slices.Contains(r.want, "no answer within") }

func TestFaultMatrix(t *testing.T) {
	// Not parallel: see the comment at the top of the file.
	type cell struct {
		row  faultRow
		mode string
		// method and path are where the fault is injected.
		method, path string
	}
	var waiting []cell
	for _, row := range faultMatrix() {
		for _, mode := range matrixModes {
			if row.configOnly && mode.method == http.MethodPost || row.postOnly && mode.method != http.MethodPost {
				continue
			}
			if row.waitsForBound() {
				waiting = append(waiting, cell{row, mode.name, mode.method, mode.path})
				continue
			}
			t.Run(row.name+"/"+mode.name, func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				runFaultRow(t, row, mode.name, mode.method, mode.path, nil)
				goleak.VerifyNone(t, before)
			})
		}
	}
	g := rowgroup.New(t, matrixRowsWorking)
	for _, c := range waiting {
		g.Run(c.row.name+"/"+c.mode, func(t *testing.T, r *rowgroup.Row) { runFaultRow(t, c.row, c.mode, c.method, c.path, r) })
	}
	g.Wait()
}

// runFaultRow runs one row in one mode. A row of a rowgroup.Group (r not
// nil) tells the group when its faulted request has gone out.
func runFaultRow(t *testing.T, row faultRow, mode, method, path string, r *rowgroup.Row) {
	target := proxmoxtest.NewServer(testCluster())
	defer target.Close()
	fake := proxmoxtest.NewServer(testCluster())
	defer fake.Close()
	e := &matrixEnv{target: target, dialer: testutil.NewDialer(t)}
	inject := func() {
		e.dialer.MarkFault()
		row.inject(e, method, path)
	}
	inPost := mode == "POST"
	e.env = envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Timeout = matrixTimeout
		if row.mod != nil {
			row.mod(c, e)
		}
		if inPost {
			c.Audit = hookSink{AuditSink: c.Audit, hook: inject}
		}
	})
	defer e.client.CloseIdleConnections()
	stopWatching := func() {}
	if r != nil {
		stopWatching = r.WaitingWhen(func() bool { return e.faultReached(method, path) })
		defer stopWatching()
	}
	if !inPost {
		inject()
	}

	ctx, cancel := context.WithTimeout(t.Context(), matrixDeadline)
	defer cancel()
	var res any
	var err error
	if mode == "read" {
		res, err = e.client.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "pve1"})
	} else {
		res, err = e.client.GuestPower(ctx, approvedShutdown100())
	}
	if r != nil {
		stopWatching()
		r.Working() // the checks and cleanups below, one row at a time
	}
	if ctx.Err() != nil {
		t.Fatalf("the call returned only at the test's deadline (%s): the configured bound did not apply; err = %v", matrixDeadline, err)
	}
	if err == nil {
		t.Fatalf("no error; result %s", sprint(res))
	}
	msg := err.Error()
	t.Log(msg)
	if !errors.Is(err, row.kind) {
		t.Errorf("err = %v, want it to match %v", err, row.kind)
	}
	for _, w := range append([]string{method + " " + path}, row.want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("err = %q, want it to name %q", msg, w)
		}
	}
	seen := msg + sprint(res) + e.logs.String() + e.audit.String()
	if strings.Contains(seen, canary) || headerLeak.MatchString(seen) {
		t.Errorf("the secret leaked:\n%s", seen)
	}
	if row.reaches {
		if !loggedRequest(fake, method, path) {
			t.Errorf("the fault was never reached: %v", reqLines(fake.Requests()))
		}
	}
	if got := target.Requests(); len(got) != 0 {
		t.Errorf("the redirect target (or the other server) got requests: %v", reqLines(got))
	}
	switch mode {
	case "pre-read":
		if m := fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests after a refusal: %v", reqLines(m))
		}
		if !strings.Contains(msg, "no action was taken") || !strings.Contains(msg, "cannot check the guest's current state") {
			t.Errorf("refusal does not say nothing was done: %q", msg)
		}
		auditHas(t, e.audit.String(), "refused", "cannot check the guest's current state")
	case "POST":
		if strings.Contains(msg, "no action was taken") {
			t.Errorf("a failed POST claims nothing was done: %q", msg)
		}
		auditHas(t, e.audit.String(), "approved", "")
		auditHas(t, e.audit.String(), "failed", method+" "+path)
		const unknown = "may have reached Proxmox"
		if row.unsettled != strings.Contains(msg, unknown) {
			t.Errorf("err = %q; saying %q is %v, want %v", msg, unknown, !row.unsettled, row.unsettled)
		}
		if row.unsettled {
			auditHas(t, e.audit.String(), "failed", unknown)
		}
	}
}

// loggedRequest reports whether the fake logged method path.
func loggedRequest(fake *proxmoxtest.Server, method, path string) bool {
	for _, r := range fake.Requests() {
		if r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

// loggedPrefix reports whether the fake logged a method request for a path
// under prefix.
func loggedPrefix(fake *proxmoxtest.Server, method, prefix string) bool {
	for _, r := range fake.Requests() {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			return true
		}
	}
	return false
}

// auditHas checks for a record of event whose reason contains reason.
func auditHas(t *testing.T, audit, event, reason string) {
	t.Helper()
	for _, l := range strings.Split(audit, "\n") {
		if strings.Contains(l, `"event":"`+event+`"`) && strings.Contains(l, reason) {
			return
		}
	}
	t.Errorf("no %q audit record with reason %q:\n%s", event, reason, audit)
}

// TestFaultMatrixTasks covers the two task rows: a task that never ends and
// a task-status endpoint that hangs, through the mutation's wait (Verify)
// and through WaitTask. The mutation itself went out, so exactly one POST.
func TestFaultMatrixTasks(t *testing.T) {
	// Not parallel, and the rows (each waits about 2 s) side by side, as
	// in TestFaultMatrix.
	rows := []struct {
		name string
		// hang makes the task-status endpoint hang instead of the task
		// running forever.
		hang bool
		// pastWait sets the per-request bound (5 s) above the wait's
		// (1 s): the hung status poll meets the wait's deadline first.
		pastWait bool
		// outcome and text are what the wait must report, notText what
		// it must not say; wantErr whether GuestPower returns an error.
		outcome proxmoxsafe.OutcomeStatus
		text    []string
		notText []string
		wantErr bool
		// waitErr are substrings of WaitTask's error.
		waitErr []string
	}{
		{name: "task-status endpoint hangs", hang: true, outcome: proxmoxsafe.OutcomeSubmitted, wantErr: true,
			text:    []string{"was submitted, but its outcome could not be read", "GET /nodes/pve1/tasks/UPID:pve1:", "/status: no answer within", "timed out waiting for the answer's headers", "check task UPID:pve1:"},
			waitErr: []string{"GET /nodes/pve1/tasks/UPID:pve1:", "timed out waiting for the answer's headers"}},
		{name: "task-status endpoint hangs past the wait", hang: true, pastWait: true, outcome: proxmoxsafe.OutcomeTimeout,
			text:    []string{"the task's status could not be read within 1 s", "it may still be running", "check task UPID:pve1:"},
			notText: []string{"the task was still running", "ended"},
			waitErr: []string{"stopped waiting for task UPID:pve1:", "its status was not read yet", "context deadline exceeded"}},
		// Last: it polls until its wait ends, so it keeps its slot (see
		// below) and works while the rows above only wait.
		{name: "task that never ends", outcome: proxmoxsafe.OutcomeTimeout,
			text:    []string{"the task was still running after 1 s", "check task UPID:pve1:"},
			waitErr: []string{"stopped waiting for task UPID:pve1:", "still running", "context deadline exceeded"}},
	}
	g := rowgroup.New(t, matrixRowsWorking)
	for _, row := range rows {
		g.Run(row.name, func(t *testing.T, slot *rowgroup.Row) {
			fake := proxmoxtest.NewUnstartedServer(testCluster())
			fake.TaskPolls = 1_000_000 // runs for as long as anyone polls
			fake.StartTLS()
			defer fake.Close()
			stopWatching := func() {}
			if row.hang {
				// Once the task's status is asked for, the row only waits.
				stopWatching = slot.WaitingWhen(func() bool { return loggedPrefix(fake, http.MethodGet, "/nodes/pve1/tasks/") })
				defer stopWatching()
			}
			e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
				c.Timeout = matrixTimeout
				if row.pastWait {
					c.Timeout = 5 * time.Second
				}
			})
			defer e.client.CloseIdleConnections()
			if row.hang {
				fake.InjectFault(proxmoxtest.Fault{Method: http.MethodGet, Path: "/nodes/pve1/tasks/*", Latency: time.Hour})
			}
			ctx, cancel := context.WithTimeout(t.Context(), matrixDeadline)
			defer cancel()

			in := approvedShutdown100()
			in.Wait = &proxmoxsafe.WaitOptions{Timeout: time.Second, Interval: 50 * time.Millisecond}
			if row.hang && !row.pastWait {
				in.Wait.Timeout = 3 * matrixTimeout // the request bound ends the poll first
			}
			r, err := e.client.GuestPower(ctx, in)
			stopWatching() // first: a watcher still running could give the slot up again
			slot.Working() // the checks and cleanups below, one row at a time
			if ctx.Err() != nil {
				t.Fatalf("GuestPower returned only at the test's deadline: %v", err)
			}
			if r == nil || r.Outcome == nil {
				t.Fatalf("no receipt with an outcome: %v (err %v)", r, err)
			}
			o := r.Outcome
			t.Log(o.Message)
			if o.Status != row.outcome {
				t.Errorf("outcome %q, want %q: %s", o.Status, row.outcome, o.Message)
			}
			if row.hang && o.TaskPolls != 0 {
				// The status endpoint never answers: a poll that counted
				// read an answer the fake must not have sent.
				t.Errorf("task polls = %d, want 0: a status poll was answered although the endpoint hangs", o.TaskPolls)
			}
			for _, w := range row.text {
				if !strings.Contains(o.Message, w) {
					t.Errorf("outcome message %q does not say %q", o.Message, w)
				}
			}
			for _, w := range row.notText {
				if strings.Contains(o.Message, w) {
					t.Errorf("outcome message %q says %q, which is not known", o.Message, w)
				}
			}
			if row.wantErr != (err != nil) {
				t.Errorf("err = %v; a wait that could not read Proxmox returns an error, a timeout does not", err)
			}
			if m := fake.MutatingRequests(); len(m) != 1 {
				t.Errorf("mutating requests = %v, want the one shutdown", reqLines(m))
			}

			_, err = e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: r.UPID}, &proxmoxsafe.WaitOptions{Timeout: in.Wait.Timeout, Interval: 50 * time.Millisecond})
			if ctx.Err() != nil {
				t.Fatalf("WaitTask returned only at the test's deadline: %v", err)
			}
			if err == nil {
				t.Fatal("WaitTask: no error")
			}
			t.Log(err)
			for _, w := range row.waitErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("WaitTask err %q does not say %q", err, w)
				}
			}
			if !row.hang && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("WaitTask err %v does not match context.DeadlineExceeded", err)
			}
			seen := sprint(r) + err.Error() + e.logs.String() + e.audit.String()
			if strings.Contains(seen, canary) || headerLeak.MatchString(seen) {
				t.Errorf("the secret leaked:\n%s", seen)
			}
		})
	}
	g.Wait()
}
