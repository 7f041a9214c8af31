package mcphttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	rpcerr "github.com/proxmoxsafe/proxmox-safe-mcp/internal/jsonrpc"
)

// TestCancelWriter: on an event stream the call's writer passes whole
// events, however go-sdk's writes split them, and drops only the event
// answering the call, only when the client cancelled it; other bodies
// pass unchanged.
func TestCancelWriter(t *testing.T) {
	t.Parallel()
	id, _ := jsonrpc.MakeID(7.0)
	const (
		progress = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"id\":7}}\n\n"
		other    = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\n"
		answer   = "event: message\nid: s_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"isError\":true}}\n\n"
	)
	for _, tc := range []struct {
		name      string
		ctype     string
		cancelled bool
		writes    []string
		want      string
	}{
		{"cancelled", "text/event-stream", true, []string{progress, other, answer}, progress + other},
		{"cancelled, split writes", "text/event-stream", true, []string{progress[:9], progress[9:] + answer[:20], answer[20:]}, progress},
		{"not cancelled", "text/event-stream", false, []string{progress, answer}, progress + answer},
		{"not an event stream", "application/json", true, []string{`{"jsonrpc":"2.0","id":7,"result":{}}`}, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		{"an unfinished event", "text/event-stream", true, []string{"data: {"}, "data: {"},
	} {
		var set rpcerr.Cancellations
		set.Start(id)
		if tc.cancelled {
			set.Cancel(id)
		}
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", tc.ctype)
		w := newCancelWriter(rec, id, &set)
		for _, b := range tc.writes {
			if n, err := w.Write([]byte(b)); n != len(b) || err != nil {
				t.Errorf("%s: Write %d, %v", tc.name, n, err)
			}
		}
		w.flushRest()
		if got := rec.Body.String(); got != tc.want {
			t.Errorf("%s: wrote %q, want %q", tc.name, got, tc.want)
		}
		if set.Len() != 0 && tc.ctype == "text/event-stream" && tc.name != "an unfinished event" {
			t.Errorf("%s: the answered call is still recorded", tc.name)
		}
	}
}

// TestResponseID: reading only a message's first keys finds the same
// response id as decoding the whole message, in go-sdk's key order and in
// any other; a request or notification (even one whose id is the call's)
// is not a response. (A message go-sdk cannot write, cut short after its
// "result" key or with a "method" after it, is not compared.)
func TestResponseID(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"isError":true}}`,
		`{"jsonrpc":"2.0","id":"a-7","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`,
		`{"result":{},"jsonrpc":"2.0","id":7}`,
		`{"id":7,"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"1.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":7}`,
		`[{"jsonrpc":"2.0","id":7,"result":{}}]`,
		`not json`,
	} {
		want, wantOK := jsonrpc.ID{}, false
		if m, err := jsonrpc.DecodeMessage([]byte(msg)); err == nil {
			if r, ok := m.(*jsonrpc.Response); ok {
				want, wantOK = r.ID, true
			}
		}
		got, ok := responseID([]byte(msg))
		if got != want || ok != wantOK {
			t.Errorf("%s: response id %v %v, want %v %v (as go-sdk decodes it)", msg, got.Raw(), ok, want.Raw(), wantOK)
		}
	}
}

// TestAnswersByItsStart: telling an answer by how go-sdk begins it gives
// what decoding its first keys gives, for the ids it is made for and for
// those left to the decoder.
func TestAnswersByItsStart(t *testing.T) {
	t.Parallel()
	msgs := []string{
		`{"jsonrpc":"2.0","id":7,"result":{"isError":true}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"params":{},"method":"elicitation/create"}`,
		`{"jsonrpc":"2.0","id":7,"result2":{}}`,
		`{"jsonrpc":"2.0","id":70,"result":{}}`,
		`{"jsonrpc":"2.0","id":7.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":"7","result":{}}`,
		`{"jsonrpc":"2.0","id":"a-7","result":{}}`,
		`{"jsonrpc":"2.0","id":"a-7","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\u003cx\u003e","result":{}}`,
		`{"jsonrpc":"2.0","id":"<x>","result":{}}`,
		`{"id":7,"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}`,
	}
	for _, raw := range []any{7.0, 70.0, "7", "a-7", "<x>"} {
		id, _ := jsonrpc.MakeID(raw)
		start := answerStart(id)
		if _, isString := raw.(string); start == nil && (!isString || raw == "7" || raw == "a-7") {
			t.Errorf("id %v: no answer start, every event would be decoded", raw)
		}
		for _, msg := range msgs {
			event := []byte("event: message\ndata: " + msg + "\n\n")
			if got, want := answers(event, id, start), answers(event, id, nil); got != want {
				t.Errorf("id %v, %s: answers %v by its start, %v decoded", raw, msg, got, want)
			}
		}
	}
}

type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// BenchmarkCancelWriter: the answer event of one call written through a
// call's writer (not cancelled), as go-sdk writes it: one Write. Run with
//
//	go test -run '^$' -bench CancelWriter -benchmem ./mcphttp
func BenchmarkCancelWriter(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("result=%dKiB", size>>10), func(b *testing.B) {
			id, _ := jsonrpc.MakeID(7.0)
			event := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"" + strings.Repeat("x", size) + "\"}}\n\n")
			dw := discardWriter{h: http.Header{"Content-Type": {"text/event-stream"}}}
			b.SetBytes(int64(len(event)))
			for b.Loop() {
				var set rpcerr.Cancellations
				set.Start(id)
				w := newCancelWriter(dw, id, &set)
				if _, err := w.Write(event); err != nil {
					b.Fatal(err)
				}
				w.flushRest()
			}
		})
	}
}
