package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// waitFixture is newFixture with a fake configured before it starts (task
// lifecycle options cannot change later), an operator wait cap, and a
// client that records progress notifications.
type waitFixture struct {
	*fixture
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	notified chan struct{} // one value per notification, buffered
}

func newWaitFixture(t *testing.T, pv string, setup func(*proxmoxtest.Server), maxWait time.Duration) *waitFixture {
	t.Helper()
	f := &waitFixture{fixture: &fixture{audit: newMemAudit(), logs: &syncBuffer{}}, notified: make(chan struct{}, 1000)}
	f.fake = proxmoxtest.NewUnstartedServer(nil)
	if setup != nil {
		setup(f.fake)
	}
	f.fake.StartTLS()
	t.Cleanup(f.fake.Close)
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         f.fake.URL,
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: f.fake.Fingerprint(),
		Policy:      defaultPolicy(),
		Audit:       f.audit,
		Logger:      logger,
		MaxWait:     maxWait,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	f.server = New(c, &Options{Logger: logger})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wait-test-client", Version: "v0.0.1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, req.Params)
			f.mu.Unlock()
			f.notified <- struct{}{}
		},
	})
	f.cs, err = client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.cs.Close()
		ss.Wait()
	})
	return f
}

func powerArgs(node, typ string, vmid int, action string, extra map[string]any) map[string]any {
	args := map[string]any{"node": node, "type": typ, "vmid": vmid, "action": action,
		"approval": "APPROVE " + action + " " + node + "/" + typ + "/" + strconv.Itoa(vmid)}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

// receiptOf decodes the structured receipt, also from a tool error.
func receiptOf(t *testing.T, res *mcp.CallToolResult) receiptResult {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("no structuredContent: %s", mustJSON(t, res))
	}
	var r receiptResult
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func lastAudit(t *testing.T, f *waitFixture) proxmoxsafe.AuditRecord {
	t.Helper()
	recs := f.audit.records(t)
	if len(recs) == 0 {
		t.Fatal("no audit records")
	}
	return recs[len(recs)-1]
}

func TestWaitToolCompleted(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, nil, 0)
			res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true}))
			if res.IsError {
				t.Fatalf("tool error: %s", text(t, res))
			}
			msg := text(t, res)
			if !strings.Contains(msg, "Start of VM 103 (build-runner) on pve2 completed OK: running (task UPID:pve2:") {
				t.Errorf("text = %q", msg)
			}
			r := receiptOf(t, res)
			if r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted || !r.Outcome.Verified || r.Outcome.After.Status != "running" {
				t.Errorf("outcome = %+v", r.Outcome)
			}
			if a := lastAudit(t, f); a.Event != proxmoxsafe.AuditCompleted || a.UPID != r.UPID {
				t.Errorf("last audit record = %+v", a)
			}
			// No progress token was sent, so no notifications.
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.progress) != 0 {
				t.Errorf("progress sent without a token: %d", len(f.progress))
			}
		})
	}
}

func TestWaitToolSnapshot(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, nil, 0)
			res := f.call(t, t.Context(), ToolSnapshotGuest, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "waited",
				"approval": "APPROVE snapshot pve1/qemu/100/waited", "wait": true, "timeout_seconds": 10})
			msg := text(t, res)
			if res.IsError || !strings.Contains(msg, "Snapshot waited of VM 100 (web-01) on pve1 completed OK: snapshot waited present") {
				t.Errorf("text = %q", msg)
			}
			if r := receiptOf(t, res); r.Outcome.TimeoutSeconds != 10 {
				t.Errorf("outcome = %+v", r.Outcome)
			}
		})
	}
}

func TestWaitToolFailed(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, nil, 0)
			f.fake.FailNextTask("start failed: QEMU exited with code 1")
			res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true}))
			msg := wantError(t, res, "Start of VM 103 (build-runner) on pve2 FAILED: start failed: QEMU exited with code 1",
				"Now: stopped.", "Last task log lines:", "TASK ERROR: start failed: QEMU exited with code 1")
			if strings.Contains(msg, "no action was taken") {
				t.Errorf("a failed task was submitted; the text must not say nothing was done: %q", msg)
			}
			r := receiptOf(t, res)
			if r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed || r.Outcome.ExitStatus != "start failed: QEMU exited with code 1" {
				t.Errorf("outcome = %+v", r.Outcome)
			}
			if a := lastAudit(t, f); a.Event != proxmoxsafe.AuditFailed || a.UPID != r.UPID {
				t.Errorf("last audit record = %+v", a)
			}
			// LoggingMiddleware classifies it as an error, not a refusal.
			if !strings.Contains(f.logs.String(), `"outcome":"error"`) {
				t.Errorf("log lacks the error outcome:\n%s", f.logs.String())
			}
		})
	}
}

func TestWaitToolWarnings(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t, "", nil, 0)
	f.fake.FailNextTask("WARNINGS: 2")
	res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true}))
	msg := text(t, res)
	if res.IsError || !strings.Contains(msg, "completed with warnings (2): running") || !strings.Contains(msg, "WARN: simulated warning 1") {
		t.Errorf("text = %q", msg)
	}
}

func TestWaitToolTimeout(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, func(s *proxmoxtest.Server) { s.TaskPolls = 1_000_000 }, 0)
			res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true, "timeout_seconds": 1}))
			if res.IsError {
				t.Fatalf("a timeout is not a tool error: %s", text(t, res))
			}
			r := receiptOf(t, res)
			want := "Start of VM 103 (build-runner) on pve2: still running after 1 s; check task " + r.UPID + " later"
			if msg := text(t, res); !strings.Contains(msg, want) {
				t.Errorf("text = %q, want %q", msg, want)
			}
			if r.Outcome.Status != proxmoxsafe.OutcomeTimeout || r.Outcome.TaskStatus != "running" {
				t.Errorf("outcome = %+v", r.Outcome)
			}
		})
	}
}

// TestWaitToolHA: the hastop task ends OK at once; the answer must wait for
// the HA manager to stop the guest.
func TestWaitToolHA(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, func(s *proxmoxtest.Server) { s.HADelayPolls = 3 }, 0)
			res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve1", "qemu", 101, "shutdown", map[string]any{"wait": true}))
			msg := text(t, res)
			if res.IsError || !strings.Contains(msg, "Shutdown of VM 101 (web-02) on pve1 completed OK: stopped") {
				t.Errorf("text = %q", msg)
			}
			r := receiptOf(t, res)
			if r.Task.Type != "hastop" || r.Outcome.StatePolls < 2 {
				t.Errorf("task %s, outcome %+v", r.Task.Type, r.Outcome)
			}
			reads, posted := 0, false
			for _, q := range f.fake.Requests() {
				posted = posted || q.Method == "POST"
				if posted && q.Method == "GET" && q.Path == "/nodes/pve1/qemu/101/status/current" {
					reads++
				}
			}
			if reads < 2 {
				t.Errorf("status/current read %d times after the POST, want more than one", reads)
			}
			if g, _ := f.fake.Guest(101); g.Status != "stopped" {
				t.Errorf("fake guest is %s", g.Status)
			}
		})
	}
}

func TestWaitToolProgress(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newWaitFixture(t, pv, func(s *proxmoxtest.Server) { s.TaskPolls = 2 }, 0)
			params := &mcp.CallToolParams{Name: ToolGuestPower, Arguments: powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true})}
			params.SetProgressToken("wait-1")
			res, err := f.cs.CallTool(t.Context(), params)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("tool error: %s", text(t, res))
			}
			// Notifications precede the response on the wire, but the client
			// may dispatch them concurrently: wait for the final one.
			deadline := time.After(10 * time.Second)
			for done := false; !done; {
				select {
				case <-f.notified:
					f.mu.Lock()
					last := f.progress[len(f.progress)-1]
					f.mu.Unlock()
					done = strings.Contains(last.Message, "completed OK")
				case <-deadline:
					t.Fatal("no final progress notification")
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.progress) < 3 {
				t.Fatalf("got %d notifications, want running polls and the end", len(f.progress))
			}
			for i, p := range f.progress {
				if p.ProgressToken != "wait-1" {
					t.Errorf("notification %d token = %v", i, p.ProgressToken)
				}
				if i > 0 && p.Progress <= f.progress[i-1].Progress {
					t.Errorf("progress does not increase: %v then %v", f.progress[i-1].Progress, p.Progress)
				}
			}
			if !strings.Contains(f.progress[0].Message, "still running") {
				t.Errorf("first notification = %q", f.progress[0].Message)
			}
		})
	}
}

// TestWaitToolCap: the timeout maximum is the operator's cap: in the
// schema Tools reports and calls are checked against, and in the
// instructions, since the listed schemas state no bounds (listedInput);
// the schema refuses more before anything is sent.
func TestWaitToolCap(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t, "", nil, 45*time.Second)
	if ins := f.cs.InitializeResult().Instructions; !strings.Contains(ins, "timeout_seconds (default 30, at most 45)") {
		t.Errorf("the instructions do not state the cap of 45 s:\n%s", ins)
	}
	for _, ti := range Tools(f.client, nil) {
		if p := ti.InputSchema.Properties["timeout_seconds"]; p != nil && *p.Maximum != 45 {
			t.Errorf("Tools(client): %s maximum %v", ti.Name, *p.Maximum)
		}
	}
	for _, ti := range Tools(nil, nil) {
		if p := ti.InputSchema.Properties["timeout_seconds"]; p != nil && *p.Maximum != proxmoxsafe.DefaultMaxWait.Seconds() {
			t.Errorf("Tools(nil): %s maximum %v", ti.Name, *p.Maximum)
		}
	}
	res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true, "timeout_seconds": 46}))
	wantError(t, res, "invalid input", "no action was taken")
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %v", requestLines(m))
	}
}

// TestWaitToolWithoutWait: timeout_seconds alone does not wait; the answer
// is the receipt as before.
func TestWaitToolWithoutWait(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t, "", nil, 0)
	res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"timeout_seconds": 5}))
	msg := text(t, res)
	if res.IsError || !strings.HasPrefix(msg, "Submitted start of VM 103 (build-runner) on pve2: task UPID:") {
		t.Errorf("text = %q", msg)
	}
	if r := receiptOf(t, res); r.Outcome != nil {
		t.Errorf("outcome without wait: %+v", r.Outcome)
	}
	for _, q := range f.fake.Requests() {
		if strings.Contains(q.Path, "/tasks/") {
			t.Errorf("polled without wait: %s", requestLine(q))
		}
	}
}
