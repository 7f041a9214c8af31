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
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// TestStdioConnBatch: on a protocol version with batches, a batch's
// messages are read in order and the answers to its requests go out as one
// array, in the order of the requests, when the last is written; a
// notification in the batch gets no answer and does not hold the array
// back (go-sdk's ioConn waited for an answer to it, forever). A batch
// member that repeats the id of a request still unanswered is answered
// with an error with id null (its id names the earlier request's answer),
// at once when the batch has no other request; a batch before initialize
// is refused whole.
func TestStdioConnBatch(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"two","method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":"two","method":"ping"}]`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	}, "\n")
	out := &testutil.SyncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	if got, want := readN(t, conn, 5), []string{"initialize 0", "ping 1", "notifications/x <nil>", "ping two", "ping 5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	if got, want := errorAnswers(t, out.String()), []string{"null -32600", "null -32600"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	mark := len(out.String())
	since := func() string { s := out.String()[mark:]; mark += len(s); return s }

	ctx := t.Context()
	write := func(id any, result string) {
		t.Helper()
		if err := conn.Write(ctx, &jsonrpc.Response{ID: mustID(t, id), Result: json.RawMessage(result)}); err != nil {
			t.Fatal(err)
		}
	}
	write(0.0, `{}`)
	since()
	write("two", `{"n":2}`)
	write(5.0, `{}`)
	if got, want := since(), `{"jsonrpc":"2.0","id":5,"result":{}}`+"\n"; got != want {
		t.Fatalf("before the batch is complete: wrote %q, want only %q", got, want)
	}
	write(1.0, `{"n":1}`)
	line := since()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("the batch answer is not one line: %q", line)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(line), &raws); err != nil {
		t.Fatalf("the batch answer %q is not an array: %v", line, err)
	}
	var got []string
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		resp := msg.(*jsonrpc.Response)
		got = append(got, fmt.Sprintf("%v %s", resp.ID.Raw(), resp.Result))
	}
	if want := []string{`1 {"n":1}`, `two {"n":2}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("batch answer %q, want %q", got, want)
	}
	// Every request answered: now the end of input is reported.
	if msg, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after the last answer: read %v, %v; want io.EOF", msg, err)
	}
}

// TestStdioConnBatchRepeatsSingleID: a batch member repeating the id of a
// request sent alone, still unanswered, is answered in the batch's array
// with an error with id null, as a repeat of a batch's id is; the lone
// request's answer goes out on its own line. The check used to look only
// at earlier batches' ids: the batch then claimed the lone request's
// answer as its own and wrote it inside its array.
func TestStdioConnBatchRepeatsSingleID(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
	}, "\n")
	out := &testutil.SyncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	if got, want := readN(t, conn, 3), []string{"initialize 0", "ping 1", "ping 2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	ctx := t.Context()
	for _, id := range []float64{0, 1, 2} {
		if err := conn.Write(ctx, &jsonrpc.Response{ID: mustID(t, id), Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"jsonrpc":"2.0","id":0,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	lines := strings.SplitAfterN(out.String(), "\n", 3)
	if len(lines) != 3 || lines[0]+lines[1] != want {
		t.Fatalf("wrote %q, want the lone request's answer on its own line after initialize's", out.String())
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(lines[2]), &raws); err != nil || len(raws) != 2 {
		t.Fatalf("the batch answer %q is not an array of two: %v", lines[2], err)
	}
	if got := errorAnswers(t, string(raws[0])+"\n"); !reflect.DeepEqual(got, []string{"null -32600"}) {
		t.Errorf("the repeated id is answered %s (%q), want null -32600", raws[0], got)
	}
	if got, want := string(raws[1]), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("the batch's request is answered %s, want %s", got, want)
	}
}

// TestStdioConnBatchInvalidMembers: a batch with invalid members is
// answered as JSON-RPC 2.0 section 6 says, not refused whole. Each invalid
// member gets its own error object in the batch's answer array, with its
// id when it has a readable one and null otherwise, and the valid members
// reach go-sdk; the array holds, in the batch's order, the answers to the
// requests and the errors (a notification has none), and goes out when
// the last request is answered. A batch of invalid members only is
// answered at once with one error each ("[1,2,3]" gets three); an empty
// array and a batch that is not valid JSON get one error, not an array.
func TestStdioConnBatchInvalidMembers(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
		`[]`,
		`[1,2,3]`,
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method"]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"},{"foo":"boo"},` +
			`{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":{"a":1},"method":"ping"},` +
			`{"jsonrpc":"2.0","id":"3","method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","id":4,"method":7},{"jsonrpc":"2.0","id":5,"error":"boom"},{"jsonrpc":"2.0","method":"notifications/y","params":"x","jsonrpc":"1.0"}]`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
	}, "\n")
	out := &testutil.SyncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	// A bound on a hung read (the valid members never reaching go-sdk),
	// not a timing assertion.
	bounded, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var read []string
	for range 5 {
		msg, err := conn.Read(bounded)
		if err != nil {
			t.Fatalf("after %q: %v (answers so far %q)", read, err, out.String())
		}
		read = append(read, describe(msg))
	}
	if want := []string{"initialize 0", "ping 1", "notifications/x <nil>", "ping 3", "ping 6"}; !reflect.DeepEqual(read, want) {
		t.Fatalf("read %q, want %q", read, want)
	}
	// Before the batch's requests are answered: the empty array, the
	// invalid members only, the batch that is not JSON.
	var lines []string
	for line := range strings.Lines(out.String()) {
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	errObj := func(id string, code int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,`, id, code)
	}
	want := []string{errObj("null", -32600), "[" + errObj("null", -32600), errObj("null", -32700)}
	if len(lines) != len(want) {
		t.Fatalf("wrote %q, want %d lines", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to begin %q", i, lines[i], w)
		}
	}
	var three []reply
	if err := json.Unmarshal([]byte(lines[1]), &three); err != nil || len(three) != 3 {
		t.Errorf("the answer to [1,2,3] is %q, want an array of three errors", lines[1])
	}
	for _, r := range three {
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("the answer to [1,2,3] has %+v, want three Invalid Request errors with id null", r)
		}
	}
	if !strings.Contains(lines[0], "empty batch") {
		t.Errorf("the empty array's answer %q does not say it is empty", lines[0])
	}

	mark := len(out.String())
	ctx := t.Context()
	for _, id := range []any{0.0, 6.0, 1.0} {
		if err := conn.Write(ctx, &jsonrpc.Response{ID: mustID(t, id), Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String()[mark:]; strings.Contains(got, "[") {
		t.Fatalf("the batch was answered before its last request: %q", got)
	}
	if err := conn.Write(ctx, &jsonrpc.Response{ID: mustID(t, "3"), Result: json.RawMessage(`{"n":3}`)}); err != nil {
		t.Fatal(err)
	}
	tail := strings.Split(strings.TrimSuffix(out.String()[mark:], "\n"), "\n")
	batchLine := tail[len(tail)-1]
	var elems []reply
	if err := json.Unmarshal([]byte(batchLine), &elems); err != nil {
		t.Fatalf("the batch answer %q is not an array: %v", batchLine, err)
	}
	var got []string
	for _, e := range elems {
		if e.Error != nil {
			got = append(got, fmt.Sprintf("%s error %d", e.ID, e.Error.Code))
		} else {
			got = append(got, fmt.Sprintf("%s result %s", e.ID, e.Result))
		}
	}
	wantBatch := []string{
		`1 result {}`,        // ping 1
		`2 error -32600`,     // "jsonrpc":"1.0": its id is readable
		`null error -32600`,  // {"foo":"boo"}: no id
		`null error -32600`,  // an object id: not readable
		`"3" result {"n":3}`, // ping "3"
		`null error -32600`,  // a second request with id 1: null, id 1 names the first one's answer
		`4 error -32600`,     // method not a string
		`5 error -32600`,     // a response whose error is not an object
		`null error -32600`,  // a notification that is invalid ("jsonrpc" 1.0, last wins) still gets an error
	}
	if !reflect.DeepEqual(got, wantBatch) {
		t.Errorf("batch answer\n%q\nwant\n%q", got, wantBatch)
	}
	if msg, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after the last answer: read %v, %v; want io.EOF", msg, err)
	}
}
