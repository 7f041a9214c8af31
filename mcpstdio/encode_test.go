package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

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
	large := sdkMarshal(t, map[string]any{"tools": []any{map[string]any{"description": strings.Repeat("a <b> \"c\" é ", writeAsIs/8)}}})
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
		{"result written as it is", &jsonrpc.Response{ID: mustID(t, 6.0), Result: large}},
		{"result written as it is, string id", &jsonrpc.Response{ID: mustID(t, "big"), Result: large}},
		{"result written as it is, string id with a quote", &jsonrpc.Response{ID: mustID(t, `a"b`), Result: large}},
		{"large result not compact", &jsonrpc.Response{ID: mustID(t, 7.0), Result: json.RawMessage("[\n" + strings.Repeat(`"x", `, writeAsIs/5) + "1]")}},
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

// TestLargeResultWrittenAsIs: a result of writeAsIs bytes or more is
// written from go-sdk's buffer itself, between its head and its tail, not
// copied into a line first (a tools/list's copy was fresh memory, a page
// fault every 4 KB, at every start); the line is go-sdk's, byte for byte.
func TestLargeResultWrittenAsIs(t *testing.T) {
	t.Parallel()
	for _, size := range []int{writeAsIs - 1, writeAsIs, 3 * writeAsIs} {
		result := sdkMarshal(t, map[string]any{"text": strings.Repeat("x", size-len(`{"text":""}`))})
		if len(result) != size {
			t.Fatalf("result of %d bytes, want %d", len(result), size)
		}
		msg := &jsonrpc.Response{ID: mustID(t, 1.0), Result: result}
		var w partsWriter
		conn := connect(t, strings.NewReader(""), &w)
		if err := conn.Write(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		asIs := slices.ContainsFunc(w.parts, func(p []byte) bool { return len(p) == size && &p[0] == &result[0] })
		if want := size >= writeAsIs; asIs != want {
			t.Errorf("%d bytes: result written from its own buffer: %t, want %t", size, asIs, want)
		}
		want, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(w.parts, nil); !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("%d bytes: wrote %.80q…, go-sdk writes %.80q…", size, got, want)
		}
	}
}

// partsWriter keeps the slices it is given, as they are.
type partsWriter struct{ parts [][]byte }

func (w *partsWriter) Write(p []byte) (int, error) {
	w.parts = append(w.parts, p)
	return len(p), nil
}
