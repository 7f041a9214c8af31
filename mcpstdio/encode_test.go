package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
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
