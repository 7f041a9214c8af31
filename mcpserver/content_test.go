package mcpserver

import (
	"bytes"
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
