package mcphttp

import (
	"net/http/httptest"
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
		w := &cancelWriter{ResponseWriter: rec, id: id, set: &set}
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
