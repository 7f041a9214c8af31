package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

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

// repeatedArgs are tool calls whose arguments repeat a key, with the path
// the refusal must name: at the top (the case that ran VM 101's shutdown
// where a reader keeping the first value saw VM 100's), escaped, and
// nested.
var repeatedArgs = []struct {
	tool, args, path string
}{
	{ToolGuestPower, `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","vmid":101}`, "vmid"},
	{ToolGuestPower, `{"node":"pve1","type":"qemu","vm\u0069d":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100","vmid":101}`, "vmid"},
	{ToolListGuests, `{"node":"pve1","x":{"a":1,"a":2}}`, "x.a"},
}

// TestRepeatedArgumentKeys: arguments that repeat a key, at any depth, are
// refused as invalid input naming the key, before anything is read or
// sent; a mutation's refusal is audited.
func TestRepeatedArgumentKeys(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			for _, tc := range repeatedArgs {
				res := f.call(t, ctx, tc.tool, json.RawMessage(tc.args))
				msg := text(t, res)
				e := errorOf(t, res).Error
				if e.Kind != "invalid_input" || e.ActionTaken != "none" || len(e.Fields) != 1 || e.Fields[0].Field != tc.path ||
					!strings.Contains(e.Fields[0].Problem, "more than once") {
					t.Errorf("%s %s: error %+v", tc.tool, tc.args, e)
				}
				if !strings.Contains(msg, "repeat a key: "+tc.path+": is given more than once") || !strings.Contains(msg, "no action was taken") {
					t.Errorf("%s %s: %q", tc.tool, tc.args, msg)
				}
			}
			if got := f.fake.Requests(); len(got) != 0 {
				t.Errorf("requests after repeated keys: %v", requestLines(got))
			}
			var refused []string
			for _, r := range f.audit.records(t) {
				if r.Event == proxmoxsafe.AuditRefused {
					refused = append(refused, r.Reason)
				}
			}
			if len(refused) != 2 || !strings.Contains(refused[0], "repeat a key") || strings.Contains(refused[0], "vmid") {
				t.Errorf("refused audit records %q, want two naming the rule (not the key)", refused)
			}
			// The same arguments with each key once are served.
			if res := f.call(t, ctx, ToolGuestPower, json.RawMessage(`{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","plan":true}`)); res.IsError {
				t.Errorf("plan with unique keys: %s", text(t, res))
			}
		})
	}
}

// TestRepeatedArgumentKeysHTTP: the same refusal over streamable HTTP,
// where the arguments reach the server as the client wrote them.
func TestRepeatedArgumentKeysHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	h, err := mcphttp.New(f.server, &mcphttp.Options{Stateless: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		ts.Close()
	})
	for _, tc := range repeatedArgs {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + `}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+mcphttp.DefaultPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(b)
		if resp.StatusCode != http.StatusOK || !strings.Contains(got, `"isError":true`) ||
			!strings.Contains(got, `repeat a key: `+tc.path+`: is given more than once`) || !strings.Contains(got, `\"kind\":\"invalid_input\"`) {
			t.Errorf("%s %s: %d %s", tc.tool, tc.args, resp.StatusCode, got)
		}
	}
	if got := f.fake.Requests(); len(got) != 0 {
		t.Errorf("requests after repeated keys: %v", requestLines(got))
	}
}

// BenchmarkRepeatedKey measures the check on every call's arguments: a
// power action's (the common size) and api_request-sized ones with 30
// parameters, and one with 100 (beyond linearKeys: the keys go into a set).
func BenchmarkRepeatedKey(b *testing.B) {
	params := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,"param%d":"value-%d"`, i, i)
		}
		return b.String()
	}
	for name, raw := range map[string]string{
		"guest_power":     `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100","wait":true,"timeout_seconds":60}`,
		"api_request-30":  `{"method":"POST","path":"/nodes/pve1/qemu/100/config","params":{"description":"a \"quoted\" text"` + params(30) + `}}`,
		"api_request-100": `{"method":"POST","path":"/nodes/pve1/qemu/100/config","params":{"description":"a \"quoted\" text"` + params(100) + `}}`,
	} {
		b.Run(name, func(b *testing.B) {
			in := []byte(raw)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, found := repeatedKey(in); found {
					b.Fatal("found a repeat")
				}
			}
		})
	}
}

// BenchmarkDecodeArguments measures the whole decode of a power action's
// arguments (schema defaults, validation, decode), for scale.
func BenchmarkDecodeArguments(b *testing.B) {
	var st *servedSchemas
	for _, d := range toolList() {
		if d.info.Name == ToolGuestPower {
			st = d.served(2 * time.Minute)
		}
	}
	raw := json.RawMessage(`{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100","wait":true,"timeout_seconds":60}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeArguments[proxmoxsafe.GuestPowerInput](raw, st.in); err != nil {
			b.Fatal(err)
		}
	}
}
