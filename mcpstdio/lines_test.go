package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// TestLineCheckTransportStream pins what go-sdk gets from the line checker
// and what the checker answers itself, in process and fast: valid lines in
// order (CRLF endings, a last line without a newline), blank lines skipped,
// invalid and over-long lines answered in order and never passed on, and a
// clean io.EOF at the end of input (the server then exits 0). The
// binary's end-to-end tests (cmd/proxmox-safe-mcp/stdio_test.go) cover the
// same over real pipes, but not the line endings, the size limit or the
// unterminated last line.
func TestLineCheckTransportStream(t *testing.T) {
	t.Parallel()
	long := `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"` + strings.Repeat("a", maxLine) + `"}}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r",
		"",
		`not json`,
		`  {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		long,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`, // no newline after it
	}, "\n")
	out := &testutil.SyncBuffer{}
	tr := NewTransport(strings.NewReader(in), out, nil)
	ctx := context.Background()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var got []string
	for {
		msg, err := conn.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("got %T", msg)
		}
		got = append(got, fmt.Sprintf("%s %v", req.Method, req.ID.Raw()))
		answer(t, conn, msg) // the end of input waits for the answers
	}
	if want := []string{"ping 1", "ping 2", "notifications/initialized <nil>", "ping 4"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("go-sdk read %q, want %q", got, want)
	}

	var answers []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var rep reply
		if err := json.Unmarshal([]byte(line), &rep); err == nil && rep.Error == nil && rep.Result != nil {
			continue // answered by the test, as go-sdk would
		}
		if err := json.Unmarshal([]byte(line), &rep); err != nil || rep.Error == nil {
			t.Fatalf("answer %q is not a JSON-RPC error", line)
		}
		answers = append(answers, fmt.Sprintf("%s %d", rep.ID, rep.Error.Code))
	}
	if want := []string{"null -32700", "null -32600", "3 -32600"}; fmt.Sprint(answers) != fmt.Sprint(want) {
		t.Errorf("answers %q, want %q", answers, want)
	}
}

// TestLineCheckTransportTrailingWhitespace: a valid message followed by
// spaces or a tab on its line reaches go-sdk and the session goes on.
// Before, the line was passed on as sent, go-sdk's reader failed with
// "invalid trailing data at the end of stream" and the server exited 1
// with no reply: what the line checker exists to prevent (one bad line
// must not end a session other work depends on).
func TestLineCheckTransportTrailingWhitespace(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}  ` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\t\r\n" +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"
	out := &testutil.SyncBuffer{}
	tr := NewTransport(strings.NewReader(in), out, nil)
	ctx := context.Background()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for want := int64(1); want <= 3; want++ {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", want, err)
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || req.ID.Raw() != want {
			t.Fatalf("message %d: got %+v", want, msg)
		}
		answer(t, conn, msg)
	}
	if _, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("at the end of input: %v, want io.EOF", err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	if out.String() != want {
		t.Errorf("wrote %q, want only the test's three answers", out.String())
	}
}

// FuzzCheckLine compares the line checks with go-sdk's own decoder: a
// message go-sdk accepts is accepted and decoded to the same message, and
// one go-sdk refuses is refused, unless it nests deeper than go-sdk's
// limit (go-sdk then refuses the params where it decodes them).
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\u0041","method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"result":null}`,
		`{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"no","data":[1]}}`,
		`{"jsonrpc":"2.0","id":null,"method":null}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"p\u0069ng"}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"pong"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"error":"x"}`,
		`  {"jsonrpc":"2.0","id":1,"method":"ping"}	`,
		`{"jsonrpc":"2.0","id":"\xff","method":"ping"}`,
		`42`, `null`, `"x"`, `{`,
		`{"jsonrpc":"2.0","id":0,"error":{"aaaa0000aaaa":"","dAtA":[]}}`,
		`{"jsonrpc":"2.0","id":0,"error":{"Code":1,"MESSAGE":"m","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":0,"error":{"code":1,"code":2,"message":null,"data":null}}`,
		`{"jsonrpc":"2.0","id":0,"error":{"code":1.5,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":7}}`,
		`{"jsonrpc":"2.0","id":0,"error":[]}`,
		`[]`, `[1,2,3]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"},{"foo":"boo"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1.0,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if first(line) == '[' && json.Valid(line) {
			checkBatchMembers(t, line)
			return
		}
		if first(line) == '[' || !json.Valid(line) {
			// Batches: DecodeMessage takes one message. Not JSON: always
			// refused (TestLineCheckTransportStream), while DecodeMessage
			// reads the first value and ignores what follows.
			return
		}
		msg, _, problem := checkLine(line, false)
		sdk, err := jsonrpc.DecodeMessage(line)
		switch {
		case problem == nil && err != nil:
			if !strings.Contains(err.Error(), "depth") {
				t.Fatalf("accepted %q, which go-sdk refuses: %v", line, err)
			}
		case problem != nil && err == nil:
			if _, repeated := rpcerr.RepeatedKey(line, true); repeated && strings.Contains(problem.msg, "appears more than once") {
				return // stricter than go-sdk on purpose: it keeps a repeated key's last value
			}
			t.Fatalf("refused %q (%s), which go-sdk reads as %+v", line, problem.msg, sdk)
		case problem == nil && !reflect.DeepEqual(msg, sdk):
			t.Fatalf("%q: decoded %+v, go-sdk %+v", line, msg, sdk)
		}
	})
}

// checkBatchMembers holds a batch line to JSON-RPC 2.0 section 6: refused
// whole where batches are not allowed, and otherwise (unless it is not an
// array or is empty) one member per element, each checked as the element
// alone is, except that a request repeating an earlier request's id is
// invalid.
func checkBatchMembers(t *testing.T, line []byte) {
	if _, _, problem := checkLine(line, false); problem == nil {
		t.Fatalf("batch %q accepted where batches are not allowed", line)
	}
	_, members, problem := checkLine(line, true)
	var raws []json.RawMessage
	if json.Unmarshal(line, &raws) != nil || len(raws) == 0 {
		if problem == nil {
			t.Fatalf("%q accepted, which is not a non-empty array", line)
		}
		return
	}
	if problem != nil || len(members) != len(raws) {
		t.Fatalf("%q: %d members, problem %v; want one member per element", line, len(members), problem)
	}
	calls := map[jsonrpc.ID]bool{}
	for i, raw := range raws {
		msg, p := decodeMessage(raw)
		req, _ := msg.(*jsonrpc.Request)
		repeated := p == nil && req != nil && req.IsCall() && calls[req.ID]
		if p == nil && req != nil && req.IsCall() {
			calls[req.ID] = true
		}
		switch m := members[i]; {
		case (p != nil || repeated) != (m.problem != nil):
			t.Fatalf("%q member %d: problem %v, alone %v (repeated id %v)", line, i, m.problem, p, repeated)
		case m.problem == nil && !reflect.DeepEqual(m.msg, msg):
			t.Fatalf("%q member %d: %+v, alone %+v", line, i, m.msg, msg)
		case repeated && m.problem.id != nil:
			t.Fatalf("%q member %d repeats an id and is answered with id %s, want null", line, i, m.problem.id)
		}
	}
}

// TestRepeatedKeyRequest: a request that repeats a key outside a tool
// call's arguments is refused (go-sdk would serve the last value, a reader
// keeping the first would see another request), with its id unless the id
// is what is repeated; repeated keys in the arguments are left to the
// server, and a response is read as go-sdk reads it.
func TestRepeatedKeyRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, id string // id "": accepted
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_guests","name":"guest_destroy","arguments":{}}}`, "3"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"arguments":{"a":2}}}`, "3"},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/call"}`, "3"},
		{`{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}`, "null"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`, "null"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"vmid":100,"vmid":101}}}`, ""},
		{`{"jsonrpc":"2.0","id":3,"result":{"a":1,"a":2}}`, ""},
	} {
		msg, _, p := checkLine([]byte(tc.line), false)
		if tc.id == "" {
			if p != nil || msg == nil {
				t.Errorf("%s: refused (%v)", tc.line, p)
			}
			continue
		}
		if p == nil || p.code != codeInvalidRequest || !strings.Contains(p.msg, "appears more than once") {
			t.Errorf("%s: %+v, want a repeated-key refusal", tc.line, p)
			continue
		}
		var rep struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(p.object(), &rep); err != nil || string(rep.ID) != tc.id {
			t.Errorf("%s: answer %s, want id %s", tc.line, p.object(), tc.id)
		}
	}
}
