package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestLineCheckTransportStream pins what go-sdk gets from the line checker
// and what the checker answers itself, in process and fast: valid lines in
// order (CRLF endings, a last line without a newline), blank lines skipped,
// invalid and over-long lines answered in order and never passed on, and a
// clean io.EOF at the end of input (the server then exits 0). The
// end-to-end tests in stdio_test.go cover the same over real pipes, but
// not the line endings, the size limit or the unterminated last line.
func TestLineCheckTransportStream(t *testing.T) {
	t.Parallel()
	long := `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"x":"` + strings.Repeat("a", maxStdioLine) + `"}}`
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
	out := &syncBuffer{}
	tr := newLineCheckTransport(strings.NewReader(in), out, slog.New(slog.DiscardHandler))
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
// with no reply: what the line checker exists to prevent (issue 8).
func TestLineCheckTransportTrailingWhitespace(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}  ` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\t\r\n" +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"
	out := &syncBuffer{}
	tr := newLineCheckTransport(strings.NewReader(in), out, slog.New(slog.DiscardHandler))
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
