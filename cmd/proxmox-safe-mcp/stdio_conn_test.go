package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect opens the stdio connection over in, answering on out.
func connect(t *testing.T, in io.Reader, out io.Writer) mcp.Connection {
	t.Helper()
	conn, err := newLineCheckTransport(in, out, slog.New(slog.DiscardHandler)).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readAll reads messages until the end of input, as "method id" for a
// request and "response id" for a response, and answers each request with
// an id as go-sdk would (with an empty result): the end of input is
// reported only once every request has been answered.
func readAll(t *testing.T, conn mcp.Connection) []string {
	t.Helper()
	var got []string
	for {
		msg, err := conn.Read(t.Context())
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, describe(msg))
		answer(t, conn, msg)
	}
}

// readN reads n messages, described as readAll does, without answering.
func readN(t *testing.T, conn mcp.Connection, n int) []string {
	t.Helper()
	var got []string
	for range n {
		msg, err := conn.Read(t.Context())
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, describe(msg))
	}
	return got
}

func describe(msg jsonrpc.Message) string {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("%s %v", m.Method, m.ID.Raw())
	case *jsonrpc.Response:
		return fmt.Sprintf("response %v", m.ID.Raw())
	}
	return fmt.Sprintf("%T", msg)
}

// answer writes an empty result for a request with an id, as go-sdk
// answers every call.
func answer(t *testing.T, conn mcp.Connection, msg jsonrpc.Message) {
	t.Helper()
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if err := conn.Write(t.Context(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// errorAnswers decodes each line of out that is not a result as a
// JSON-RPC error answer: "id code", sorted. A batch's answer array counts
// as its elements.
func errorAnswers(t *testing.T, out string) []string {
	t.Helper()
	var answers []string
	for line := range answerObjects(t, out) {
		var rep reply
		if err := json.Unmarshal([]byte(line), &rep); err == nil && rep.Error == nil && rep.Result != nil {
			continue // a request answered by readAll
		}
		if err := json.Unmarshal([]byte(line), &rep); err != nil || rep.Error == nil {
			t.Fatalf("answer %q is not a JSON-RPC error", line)
		}
		answers = append(answers, fmt.Sprintf("%s %d", rep.ID, rep.Error.Code))
	}
	sort.Strings(answers)
	return answers
}

// answerObjects yields each answer object of out: a line, or each element
// of a line that is a batch's answer array.
func answerObjects(t *testing.T, out string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for line := range strings.Lines(out) {
			if first([]byte(line)) != '[' {
				if !yield(line) {
					return
				}
				continue
			}
			var elems []json.RawMessage
			if err := json.Unmarshal([]byte(line), &elems); err != nil {
				t.Fatalf("answer %q is not a JSON array: %v", line, err)
			}
			for _, e := range elems {
				if !yield(string(e)) {
					return
				}
			}
		}
	}
}

// TestStdioConnKeepsServing: lines the old checks let through but go-sdk's
// decoder refused, which ended the session with no reply, no longer do.
// Member names in another case, a response whose error is not an object
// and a batch's second request with the same id are answered with -32600
// (the first one is processed); a message nesting
// deeper than go-sdk's decoder allows is read (go-sdk answers -32602 when
// it decodes the params, with the same depth limit).
func TestStdioConnKeepsServing(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"error":"boom"}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	}, "\n")
	out := &syncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	if got, want := readAll(t, conn), []string{"initialize 0", "ping 3", "ping 4", "ping 5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if got, want := errorAnswers(t, out.String()), []string{"1 -32600", "2 -32600", "null -32600"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
}

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
	out := &syncBuffer{}
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
	out := &syncBuffer{}
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

// TestStdioConnWrite writes each kind of message the server sends and
// checks the line: exactly one line, read back by go-sdk's own decoder,
// and byte for byte what go-sdk's encoder writes, whether the result is
// copied as it is (a successful response with an id that needs no escape)
// or encoded by go-sdk (everything else).
func TestStdioConnWrite(t *testing.T) {
	t.Parallel()
	result := sdkMarshal(t, map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": "a \"quoted\" <b>&</b>\nline\u2028é\x01"}},
		"structuredContent": map[string]any{"name": "<web>", "vmid": 100},
	})
	params := sdkMarshal(t, map[string]any{"message": "Destroy VM 100?", "requestedSchema": map[string]any{"type": "object"}})
	for _, tc := range []struct {
		name string
		msg  jsonrpc.Message
	}{
		{"result, number id", &jsonrpc.Response{ID: mustID(t, 1.0), Result: result}},
		{"result, negative id", &jsonrpc.Response{ID: mustID(t, -7.0), Result: result}},
		{"result, large id", &jsonrpc.Response{ID: mustID(t, float64(1<<62)), Result: result}},
		{"result, string id", &jsonrpc.Response{ID: mustID(t, "req-1 <&>"), Result: result}},
		{"result, string id with a quote", &jsonrpc.Response{ID: mustID(t, `a"b`), Result: result}},
		{"result, string id with a backslash", &jsonrpc.Response{ID: mustID(t, `a\b`), Result: result}},
		{"result, string id with a newline", &jsonrpc.Response{ID: mustID(t, "a\nb"), Result: result}},
		{"result, string id not ASCII", &jsonrpc.Response{ID: mustID(t, "é\u2028"), Result: result}},
		{"result, empty string id", &jsonrpc.Response{ID: mustID(t, ""), Result: json.RawMessage(`{}`)}},
		{"result not compact", &jsonrpc.Response{ID: mustID(t, 2.0), Result: json.RawMessage("{ \"a\" : [1, 2],\n \"b\": \"x\" }")}},
		{"result null", &jsonrpc.Response{ID: mustID(t, 3.0), Result: json.RawMessage(`null`)}},
		{"wire error", &jsonrpc.Response{ID: mustID(t, 4.0), Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad\nvmid <100>", Data: json.RawMessage(`{"vmid":5}`)}}},
		{"plain error", &jsonrpc.Response{ID: mustID(t, "e"), Error: errors.New("tool failed")}},
		{"error and result", &jsonrpc.Response{ID: mustID(t, 5.0), Result: result, Error: errors.New("x")}},
		{"notification", &jsonrpc.Request{Method: "notifications/progress", Params: sdkMarshal(t, map[string]any{"progressToken": "p1", "progress": 1, "total": 3})}},
		{"notification without params", &jsonrpc.Request{Method: "notifications/tools/list_changed"}},
		{"server request", &jsonrpc.Request{ID: mustID(t, 1.0), Method: "elicitation/create", Params: params}},
		{"server request, large id", &jsonrpc.Request{ID: mustID(t, float64(1<<53+2)), Method: "ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			conn := connect(t, strings.NewReader(""), &out)
			if err := conn.Write(t.Context(), tc.msg); err != nil {
				t.Fatal(err)
			}
			line := out.Bytes()
			if bytes.IndexByte(line, '\n') != len(line)-1 {
				t.Fatalf("wrote %q: not one line", line)
			}
			want, err := jsonrpc.EncodeMessage(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(line[:len(line)-1], want) {
				t.Errorf("wrote\n%s\ngo-sdk writes\n%s", line, want)
			}
			back, err := jsonrpc.DecodeMessage(line[:len(line)-1])
			if err != nil {
				t.Fatalf("go-sdk cannot read %q: %v", line, err)
			}
			if got, want := reencode(t, back), reencode(t, tc.msg); got != want {
				t.Errorf("read back as %s, want %s", got, want)
			}
		})
	}
}

// TestStdioConnClose: Close ends a Read that waits for input that never
// comes, any number of times and from several goroutines at once, and a
// Read after it returns io.EOF.
func TestStdioConnClose(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close() // ends the line reader, which waits in pr.Read
	conn := connect(t, pr, io.Discard)
	read := make(chan error)
	go func() {
		_, err := conn.Read(t.Context())
		read <- err
	}()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := conn.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := <-read; !errors.Is(err, io.EOF) {
		t.Errorf("Read waiting at Close: %v, want io.EOF", err)
	}
	if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v, want io.EOF", err)
	}
}

// TestStdioConnLongLines: a valid line longer than the reader's buffer
// arrives whole, and the line after it too.
func TestStdioConnLongLines(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 300<<10)
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + big + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	conn := connect(t, strings.NewReader(in), io.Discard)
	msg, err := conn.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(msg.(*jsonrpc.Request).Params), `{"name":"`+big+`"}`; got != want {
		t.Errorf("params of %d bytes, want %d", len(got), len(want))
	}
	answer(t, conn, msg)
	if got := readAll(t, conn); !reflect.DeepEqual(got, []string{"ping 2"}) {
		t.Errorf("then read %q", got)
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

// sdkMarshal marshals v as go-sdk does (jsonrpc2.NewResponse: no HTML
// escaping).
func sdkMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// reencode is msg as go-sdk encodes it, to compare two messages.
func reencode(t *testing.T, msg jsonrpc.Message) string {
	t.Helper()
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStdioConnEndWaitsForAnswers: at the end of input, Read reports
// io.EOF only once every request handed to go-sdk has been answered
// (go-sdk cancels the requests still running when its input ends), and
// at once when the server waits for an answer from the client, which can
// no longer come. Virtual time (synctest): "not yet" is checked once every
// goroutine is blocked, not after a delay.
func TestStdioConnEndWaitsForAnswers(t *testing.T) {
	t.Run("answers owed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/x"}` + "\n" + `{"jsonrpc":"2.0","id":"b","method":"ping"}` + "\n"
			var out syncBuffer
			conn := connect(t, strings.NewReader(in), &out)
			reqs := readN(t, conn, 3)
			if want := []string{"ping 1", "notifications/x <nil>", "ping b"}; !reflect.DeepEqual(reqs, want) {
				t.Fatalf("read %q, want %q", reqs, want)
			}
			ended := make(chan error, 1)
			go func() { _, err := conn.Read(t.Context()); ended <- err }()
			for _, id := range []any{1.0, "b"} {
				synctest.Wait()
				select {
				case err := <-ended:
					t.Fatalf("Read returned %v with request %v unanswered", err, id)
				default:
				}
				if err := conn.Write(t.Context(), &jsonrpc.Response{ID: mustID(t, id), Result: json.RawMessage(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-ended; !errors.Is(err, io.EOF) {
				t.Errorf("after the answers: %v, want io.EOF", err)
			}
			if n := strings.Count(out.String(), "\n"); n != 2 {
				t.Errorf("wrote %q, want the two answers", out.String())
			}
		})
	})
	t.Run("the server waits for the client", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			in := `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n"
			conn := connect(t, strings.NewReader(in), io.Discard)
			readN(t, conn, 1)
			// The call asks the client (an elicitation) before answering.
			if err := conn.Write(t.Context(), &jsonrpc.Request{ID: mustID(t, 7.0), Method: "elicitation/create"}); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
				t.Errorf("with the server waiting on the client: %v, want io.EOF", err)
			}
		})
	})
	t.Run("the server gave up on the client", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			in := `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n"
			conn := connect(t, strings.NewReader(in), io.Discard)
			readN(t, conn, 1)
			// The first call elicits, is cancelled, and go-sdk retires its
			// elicitation with notifications/cancelled: no answer to 7 is
			// awaited any more, so the second call's answer is still owed.
			if err := conn.Write(t.Context(), &jsonrpc.Request{ID: mustID(t, 7.0), Method: "elicitation/create"}); err != nil {
				t.Fatal(err)
			}
			if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":7,"reason":"context canceled"}`)}); err != nil {
				t.Fatal(err)
			}
			answer(t, conn, &jsonrpc.Request{ID: mustID(t, 1.0)})
			readN(t, conn, 1)
			ended := make(chan error, 1)
			go func() { _, err := conn.Read(t.Context()); ended <- err }()
			synctest.Wait()
			select {
			case err := <-ended:
				t.Fatalf("Read returned %v with request 2 unanswered and no ask outstanding", err)
			default:
			}
			answer(t, conn, &jsonrpc.Request{ID: mustID(t, 2.0)})
			if err := <-ended; !errors.Is(err, io.EOF) {
				t.Errorf("after the answer: %v, want io.EOF", err)
			}
		})
	})
	t.Run("closed while waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			conn := connect(t, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), io.Discard)
			readN(t, conn, 1)
			synctest.Wait() // the reader waits for the answer
			conn.Close()    // a signal: the server ends the session
			if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
				t.Errorf("after Close: %v, want io.EOF", err)
			}
			synctest.Wait() // and the reader has stopped (goleak checks the rest)
		})
	})
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
	out := &syncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	// A bound on a hung read (the valid members never reaching go-sdk),
	// not a timing assertion.
	bounded, cancel := context.WithTimeout(t.Context(), terminateWait)
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
