package mcpserver

import (
	"bytes"
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

// TestRepeatedKey: a key repeated in one object is found at any depth,
// with its path, however it is escaped; the same key in different objects,
// and keys or braces inside string values, are not repeats.
func TestRepeatedKey(t *testing.T) {
	t.Parallel()
	many := func(dupAt int) string { // an object of 40 keys, k<dupAt> repeated at the end
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		fmt.Fprintf(&b, `"k%d":0}`, dupAt)
		return b.String()
	}
	for _, tc := range []struct {
		in, want string // want "": no repeated key
	}{
		{`{}`, ""},
		{`{"vmid":100,"node":"pve1"}`, ""},
		{`{"vmid":100,"vmid":101}`, "vmid"},
		{`{"vmid":100,"vm\u0069d":101}`, "vmid"},
		{`{"vm\u0069d":100,"vmid":101}`, "vmid"},
		{` { "vmid" : 100 , "node":"a" , "vmid" : 101 } `, "vmid"},
		{`{"params":{"a":"1","b":"2","a":"3"}}`, "params.a"},
		{`{"params":{"a":"1"},"other":{"a":"1"}}`, ""},
		{`{"a":{"x":1},"b":{"x":1},"a":2}`, "a"},
		{`{"disks":[{"size":"1G"},{"size":"2G","size":"3G"}]}`, "disks[1].size"},
		{`{"l":[[1,2],[{"k":1,"k":2}]]}`, "l[1][0].k"},
		{`{"s":"{\"a\":1,\"a\":2}","t":"a"}`, ""},
		{`{"s":"a\"b","s\"":1}`, ""},
		{`{"\u00e9":1,"é":2}`, "é"},
		{`{"a\\":1,"a\\":2}`, `a\`},
		{"{\"a\xff\":1,\"a\xfe\":2}", "a\ufffd"}, // encoding/json reads both as a U+FFFD
		{many(3), "k3"},
		{many(39), "k39"},
		{many(40), ""},
		{`{"a":1,"a"`, "a"}, // the repeat comes before the syntax error
		{`{"a":1,`, ""},
		{`not json`, ""},
		{`{"a":"unterminated`, ""},
	} {
		path, found := repeatedKey([]byte(tc.in))
		if found != (tc.want != "") || path != tc.want {
			t.Errorf("repeatedKey(%q) = %q, %v; want %q", tc.in, path, found, tc.want)
		}
	}
}

// FuzzRepeatedKey checks repeatedKey against encoding/json's own reading of
// the object keys (a token decoder) on every valid JSON value.
func FuzzRepeatedKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"a\u0041":1,"aA":2}`, `[{"x":1},{"x":1}]`, `{"k":"\"","k\\":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		want := referenceRepeated(t, raw)
		if _, got := repeatedKey(raw); got != want {
			t.Errorf("repeatedKey(%q) found %v, encoding/json's keys say %v", raw, got, want)
		}
	})
}

// referenceRepeated reads raw with encoding/json's token decoder and
// reports whether an object repeats a key.
func referenceRepeated(t *testing.T, raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object    bool
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.expectKey = true
				}
				stack = append(stack, &frame{object: v == '{', keys: map[string]bool{}, expectKey: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expectKey = true
				}
			}
		case string:
			if top != nil && top.object && top.expectKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.expectKey = false
				continue
			}
			if top != nil && top.object {
				top.expectKey = true
			}
		default:
			if top != nil && top.object {
				top.expectKey = true
			}
		}
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
