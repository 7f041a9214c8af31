package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// lastLineJSON splits a text content into its words and its final JSON line
// and fails the test when there is no such line.
func lastLineJSON(tb testing.TB, msg string) (words string, tail map[string]any) {
	tb.Helper()
	i := strings.LastIndexByte(msg, '\n')
	last := msg[i+1:]
	if err := json.Unmarshal([]byte(last), &tail); err != nil {
		tb.Fatalf("the text content does not end with a JSON line: %q", msg)
	}
	if i > 0 {
		words = msg[:i]
	}
	return words, tail
}

// TestTextCarriesStructuredResult: hosts that hand the model only content
// (and clients on 2025-03-26 or older) must see the data, not just a
// summary: the text ends with the structured result as compact JSON.
func TestTextCarriesStructuredResult(t *testing.T) {
	t.Parallel()
	for _, pv := range append(protocols, "2025-03-26") {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			for _, tc := range []struct {
				tool string
				args map[string]any
				want string // a datum that only the JSON carries
			}{
				{ToolListGuests, map[string]any{"node": "pve1"}, `"name":"web-01"`},
				{ToolClusterStatus, nil, `"quorate":true`},
				{ToolNodeStatus, map[string]any{"node": "pve1"}, `"cpus":`},
				{ToolGuestStatus, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}, `"maxmem":`},
			} {
				res := f.call(t, ctx, tc.tool, tc.args)
				if res.IsError {
					t.Fatalf("%s: %s", tc.tool, text(t, res))
				}
				msg := text(t, res)
				words, _ := lastLineJSON(t, msg)
				if words == "" || strings.HasPrefix(words, "{") {
					t.Errorf("%s: no summary line before the JSON: %q", tc.tool, msg)
				}
				last := msg[strings.LastIndexByte(msg, '\n')+1:]
				if !strings.Contains(last, tc.want) || strings.Contains(last, "\\u003c") {
					t.Errorf("%s: JSON line lacks %s: %s", tc.tool, tc.want, last)
				}
				if res.StructuredContent != nil {
					// Same data as structuredContent, compact.
					var a, b any
					sc, _ := json.Marshal(res.StructuredContent)
					json.Unmarshal(sc, &a)
					json.Unmarshal([]byte(last), &b)
					x, _ := json.Marshal(a)
					y, _ := json.Marshal(b)
					if !bytes.Equal(x, y) {
						t.Errorf("%s: text JSON differs from structuredContent:\n%s\n%s", tc.tool, x, y)
					}
				}
			}
		})
	}
}

// errorJSON is the {"error":…} line of an error result.
type errorJSON struct {
	Error struct {
		Kind           string                   `json:"kind"`
		Tool           string                   `json:"tool"`
		ActionTaken    string                   `json:"action_taken"`
		Reason         string                   `json:"reason"`
		Fields         []proxmoxsafe.FieldError `json:"fields"`
		ApprovalPhrase string                   `json:"approval_phrase"`
		ApprovalGiven  *bool                    `json:"approval_given"`
		Action         string                   `json:"action"`
		Target         *proxmoxsafe.Target      `json:"target"`
		Effect         string                   `json:"effect"`
		CurrentState   *proxmoxsafe.GuestState  `json:"current_state"`
		HTTPStatus     int                      `json:"http_status"`
	} `json:"error"`
}

func errorOf(tb testing.TB, res *mcp.CallToolResult) errorJSON {
	tb.Helper()
	if !res.IsError {
		tb.Fatalf("want an error result: %s", mustJSON(tb, res))
	}
	msg := text(tb, res)
	i := strings.LastIndexByte(msg, '\n')
	var e errorJSON
	if err := json.Unmarshal([]byte(msg[i+1:]), &e); err != nil || e.Error.Kind == "" {
		tb.Fatalf("no machine-readable error line in %q", msg)
	}
	return e
}

// TestMachineReadableRefusals: a script or a model reads kind, the exact
// phrase, the state and the effect without parsing prose; refusals say
// nothing was done, and nothing mutating reached Proxmox.
func TestMachineReadableRefusals(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})

			res := f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"})
			// The same object in _meta, for programs reading through an SDK.
			if m, _ := res.Meta[ErrorMetaKey].(map[string]any); m["approval_phrase"] != "APPROVE shutdown pve1/qemu/100" || m["kind"] != "approval_required" {
				t.Errorf("_meta[%s] = %v", ErrorMetaKey, res.Meta[ErrorMetaKey])
			}
			e := errorOf(t, res)
			d := e.Error
			if d.Kind != "approval_required" || d.ActionTaken != "none" || d.ApprovalPhrase != "APPROVE shutdown pve1/qemu/100" ||
				d.ApprovalGiven == nil || *d.ApprovalGiven || d.Action != "shutdown" ||
				d.Target == nil || *d.Target != (proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100}) ||
				!strings.Contains(d.Effect, "shut down") || d.CurrentState == nil || d.CurrentState.Status != "running" || d.CurrentState.Name != "" {
				t.Errorf("approval refusal = %+v", d)
			}
			e = errorOf(t, f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown", "approval": "APPROVE shutdown pve1/qemu/101"}))
			if e.Error.ApprovalGiven == nil || !*e.Error.ApprovalGiven {
				t.Errorf("wrong phrase: %+v", e.Error)
			}

			e = errorOf(t, f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve3", "type": "qemu", "vmid": 106, "action": "shutdown"}))
			if e.Error.Kind != "not_allowed" || e.Error.ActionTaken != "none" || !strings.Contains(e.Error.Reason, "allowlist") {
				t.Errorf("policy refusal = %+v", e.Error)
			}

			res = f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 5, "action": "shutdown"})
			if m, _ := res.Meta[ErrorMetaKey].(map[string]any); m["kind"] != "invalid_input" {
				t.Errorf("schema refusal _meta = %v", res.Meta)
			}
			e = errorOf(t, res)
			if e.Error.Kind != "invalid_input" || len(e.Error.Fields) != 1 || e.Error.Fields[0] != (proxmoxsafe.FieldError{Field: "vmid", Problem: "must be at least 100"}) {
				t.Errorf("schema refusal = %+v", e.Error)
			}

			e = errorOf(t, f.call(t, ctx, ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 102, "action": "stop"}))
			if e.Error.Kind != "precondition" || e.Error.ActionTaken != "none" {
				t.Errorf("precondition refusal = %+v", e.Error)
			}

			e = errorOf(t, f.call(t, ctx, ToolTaskStatus, map[string]any{"node": "pve1", "upid": "UPID:pve1:00001234:00005678:6553F000:qmstart:100:root@pam:"}))
			if e.Error.Kind != "not_found" || e.Error.ActionTaken != "none" {
				t.Errorf("unknown task = %+v", e.Error)
			}
			if msg := text(t, f.call(t, ctx, ToolTaskStatus, map[string]any{"node": "pve1", "upid": "UPID:pve1:00001234:00005678:6553F000:qmstart:100:root@pam:"})); strings.Contains(msg, "list_guests") || !strings.Contains(msg, "task_list") {
				t.Errorf("unknown UPID advice: %q", msg)
			}

			if got := f.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests after refusals: %v", requestLines(got))
			}
		})
	}
}

// TestSchemaErrorsReadLikeTheLibrary: go-sdk's raw schema messages
// ("maximum: 500/1 is greater than 120.000000") become the library's
// "field: problem", and the refused value is not repeated.
func TestSchemaErrorsReadLikeTheLibrary(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, ctx, "", fixtureConfig{})
	power := func(kv ...any) map[string]any {
		m := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	long := strings.Repeat("z", 300)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolGuestPower, power("wait", true, "timeout_seconds", 500), "timeout_seconds: must be at most 120"},
		{ToolGuestPower, power("vmid", 5), "vmid: must be at least 100"},
		{ToolGuestPower, power("type", "qemx"), "type: must be one of: qemu, lxc"},
		{ToolGuestPower, power("vmid", "100"), "vmid: must be a whole number"},
		{ToolGuestPower, power("extra", 1), "extra: is not a parameter of guest_power"},
		{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}, "action: is required"},
		{ToolGuestPower, power("node", "p_e"), "node: must be a Proxmox node name"},
		{ToolListGuests, map[string]any{"name": long}, "name: must be at most 128 characters long"},
		{ToolListGuests, map[string]any{"limit": 5000}, "limit: must be at most 1000"},
		{ToolSnapshotGuest, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "current"}, "snapname: is a name Proxmox reserves"},
	} {
		msg := text(t, f.call(t, ctx, tc.tool, tc.args))
		words, _ := lastLineJSON(t, msg)
		if !strings.Contains(words, tc.want) || !strings.HasSuffix(words, "; no action was taken") {
			t.Errorf("%v: %q, want %q", tc.args, words, tc.want)
		}
		for _, raw := range []string{"validating", "/properties/", "000000", long, "p_e", "qemx"} {
			if strings.Contains(msg, raw) {
				t.Errorf("%v: message still has %q: %q", tc.args, raw, msg)
			}
		}
	}
}

// TestNullArguments: `"arguments": null` on a mutation tool is refused like
// `{}` (it panicked in go-sdk's schema-default step, and the recovery said
// the outcome was unknown, with no audit record).
func TestNullArguments(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			for _, tool := range []string{ToolGuestPower, ToolSnapshotGuest, ToolListGuests} { // the read last: it sends GETs
				if tool == ToolListGuests {
					if got := f.fake.Requests(); len(got) != 0 {
						t.Errorf("requests after invalid input: %v", requestLines(got))
					}
				}
				res := f.call(t, ctx, tool, json.RawMessage("null"))
				if tool == ToolListGuests {
					if res.IsError {
						t.Errorf("%s with null arguments: %s", tool, text(t, res))
					}
					continue
				}
				msg := text(t, res)
				if e := errorOf(t, res); e.Error.Kind != "invalid_input" || e.Error.ActionTaken != "none" ||
					strings.Contains(msg, "internal error") || strings.Contains(msg, "unknown") || !strings.Contains(msg, "is required") {
					t.Errorf("%s with null arguments: %q", tool, msg)
				}
			}
			refused := 0
			for _, r := range f.audit.records(t) {
				if r.Event == "refused" {
					refused++
				}
			}
			if refused != 2 {
				t.Errorf("%d refused audit records, want 2:\n%s", refused, f.audit.String())
			}
			if strings.Contains(f.logs.String(), "panic") {
				t.Errorf("a panic was logged:\n%s", f.logs.String())
			}
		})
	}
}

// TestPanicMessageIsTrue: a panic recovered before one of our handlers ran
// says nothing was sent; after it started, that the outcome is unknown; a
// tool that is not ours is never claimed to have done nothing.
func TestPanicMessageIsTrue(t *testing.T) {
	t.Parallel()
	ctx := withHandlerTracking(context.Background())
	before := text(t, panicResult(ctx, ToolGuestPower))
	if !strings.Contains(before, "no action was taken") || strings.Contains(before, "unknown") {
		t.Errorf("before the handler: %q", before)
	}
	if e := errorOf(t, panicResult(ctx, ToolGuestPower)); e.Error.Kind != "internal" || e.Error.ActionTaken != "none" {
		t.Errorf("before the handler: %+v", e.Error)
	}
	other := text(t, panicResult(ctx, "someone_elses_tool"))
	if !strings.Contains(other, "outcome is unknown") {
		t.Errorf("a foreign tool: %q", other)
	}
	markHandlerEntered(ctx)
	after := panicResult(ctx, ToolGuestPower)
	if msg := text(t, after); !strings.Contains(msg, "outcome is unknown") {
		t.Errorf("after the handler started: %q", msg)
	}
	if e := errorOf(t, after); e.Error.ActionTaken != "unknown" {
		t.Errorf("after the handler started: %+v", e.Error)
	}
}

// TestWaitStatusNeverAnswers: with wait, a task-status poll that never
// answers must not be reported as "the task ended , but …".
func TestWaitStatusNeverAnswers(t *testing.T) {
	t.Parallel()
	f := newWaitFixture(t, "", func(s *proxmoxtest.Server) {
		s.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve2/tasks/*", Latency: time.Minute})
	}, 0)
	res := f.call(t, t.Context(), ToolGuestPower, powerArgs("pve2", "qemu", 103, "start", map[string]any{"wait": true, "timeout_seconds": 1}))
	msg := text(t, res)
	if strings.Contains(msg, "ended") || !strings.Contains(msg, "could not be read") || !strings.Contains(msg, "may still be running") {
		t.Errorf("text = %q", msg)
	}
}

// BenchmarkResultContent measures building the result of a full default
// page (200 guests): one marshal for structuredContent and its copy in the
// text content (compare with BenchmarkListGuestsMCP).
func BenchmarkResultContent(b *testing.B) {
	ctx := b.Context()
	fake := proxmoxtest.NewServer(benchCluster())
	b.Cleanup(fake.Close)
	client := newClient(b, fake, defaultPolicy(), "", newMemAudit(), nil)
	res, err := client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := structuredResult("Listed 200 of 300 guests", res); len(r.Content) != 1 {
			b.Fatal(len(r.Content))
		}
	}
}
