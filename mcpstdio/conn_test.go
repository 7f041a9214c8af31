package mcpstdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// reply is one JSON-RPC answer as a test reads it.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// connect opens the stdio connection over in, answering on out.
func connect(t *testing.T, in io.Reader, out io.Writer) mcp.Connection {
	t.Helper()
	conn, err := NewTransport(in, out, nil).Connect(t.Context())
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
	out := &testutil.SyncBuffer{}
	conn := connect(t, strings.NewReader(in), out)
	if got, want := readAll(t, conn), []string{"initialize 0", "ping 3", "ping 4", "ping 5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if got, want := errorAnswers(t, out.String()), []string{"1 -32600", "2 -32600", "null -32600"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %q, want %q", got, want)
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
			var out testutil.SyncBuffer
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

// mustID is the id of v (nil, a float64 or a string, as jsonrpc.MakeID
// takes it).
func mustID(tb testing.TB, v any) jsonrpc.ID {
	tb.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// TestRequestAfterInvalidLineAnswered: a request that follows an invalid
// line at once is answered, every time. A campaign reported the ping of
// `notifications/initialized`, `this is not json`, `{"id":7,"method":"ping"}`
// (written together right after initialize) unanswered about one time in
// four to ten. Over real pipes, reading every byte, it was never lost (here
// and in 400 runs of the built binary); the loss is reproduced by a
// client that reads the parse error with a buffered line reader and then
// waits on the pipe's descriptor for the next line: the ping's answer,
// small and quick, often arrives in the same read as the parse error and
// sits in the reader's buffer, where a poll of the descriptor cannot see
// it (a tools/list answer comes later, in a read of its own). This test
// keeps the server side honest: many sessions over OS pipes, each with the
// reported sequence and a few variants, each answer read byte by byte.
func TestRequestAfterInvalidLineAnswered(t *testing.T) {
	t.Parallel()
	iterations := 1000
	if testing.Short() {
		iterations = 20
	}
	sequences := []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\nthis is not json\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n",
		"this is not json\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n[]\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\nthis is not json\n" + `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n",
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	for i := range iterations {
		seq := sequences[i%len(sequences)]
		if err := pingAfterInvalidLine(t, server, seq); err != nil {
			t.Fatalf("session %d (%q): %v", i, seq, err)
		}
	}
}

// pingAfterInvalidLine runs one session of server over OS pipes: initialize,
// its answer, then seq in one write; it returns an error unless the invalid
// line's error and the answer to id 7 both come back within 10 s.
func pingAfterInvalidLine(t *testing.T, server *mcp.Server, seq string) error {
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- server.Run(ctx, NewTransport(toServer, fromServer, nil)) }()
	defer func() {
		fromClient.Close() // the end of input: Run returns
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
		cancel()
		toServer.Close()
		fromServer.Close()
		toClient.Close()
	}()
	toClient.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	readUntil := func(want ...string) error {
		buf := make([]byte, 64*1024)
		for {
			all := true
			for _, w := range want {
				all = all && bytes.Contains(got, []byte(w))
			}
			if all {
				return nil
			}
			n, err := toClient.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return fmt.Errorf("read %q: %w", got, err)
			}
		}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	if _, err := fromClient.WriteString(init); err != nil {
		t.Fatal(err)
	}
	if err := readUntil(`"id":1,"result"`); err != nil {
		return err
	}
	if _, err := fromClient.WriteString(seq); err != nil {
		t.Fatal(err)
	}
	return readUntil(`"id":null,"error"`, `"id":7,"result"`)
}
