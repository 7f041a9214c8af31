package mcpstdio

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// slowServer serves "slow", which reports on started and then waits for
// its context to end (a cancelled call ends it) before returning the
// context's error, and "echo". returned is closed when slow returns.
func slowServer() (server *mcp.Server, started, returned chan struct{}) {
	server = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	started, returned = make(chan struct{}), make(chan struct{})
	type none struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, none, error) {
		defer close(returned)
		close(started)
		<-ctx.Done()
		return nil, none{}, ctx.Err()
	})
	type echo struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echo) (*mcp.CallToolResult, echo, error) {
		return nil, in, nil
	})
	return server, started, returned
}

// teeCloser is a tee reader that closes its source.
type teeCloser struct {
	io.Reader
	io.Closer
}

// wireLines decodes each line of a recorded stream as a JSON-RPC message.
func wireLines(t *testing.T, s string) []map[string]json.RawMessage {
	t.Helper()
	var msgs []map[string]json.RawMessage
	for line := range strings.Lines(s) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// TestCancelledCallGetsNoAnswer: a client cancels a tools/call in flight
// (notifications/cancelled, which go-sdk's client sends when the call's
// context ends); the server sends no response with its id, as the MCP
// specification says it should not, and keeps answering: a later call
// gets its answer. On both protocol eras ("" negotiates the newest).
func TestCancelledCallGetsNoAnswer(t *testing.T) {
	t.Parallel()
	for _, pv := range []string{"", "2025-11-25"} {
		t.Run("protocol "+pv, func(t *testing.T) {
			t.Parallel()
			server, started, returned := slowServer()
			toServer, fromClient := io.Pipe()
			toClient, fromServer := io.Pipe()
			var sent, got testutil.SyncBuffer // client → server, server → client
			ran := make(chan error, 1)
			go func() {
				ran <- server.Run(t.Context(), NewTransport(io.TeeReader(toServer, &sent), fromServer, nil))
				fromServer.Close()
			}()
			client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: teeCloser{io.TeeReader(toClient, &got), toClient}, Writer: fromClient}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				called <- err
			}()
			<-started
			cancel()
			if err := <-called; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v, want context.Canceled", err)
			}
			select {
			case <-returned: // the notification reached the handler
			case <-time.After(10 * time.Second):
				t.Fatal("the handler never saw the cancellation")
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
			if err != nil || res.IsError {
				t.Fatalf("the call after the cancelled one: %+v, %v", res, err)
			}
			cs.Close()
			if err := <-ran; err != nil {
				t.Errorf("Run: %v", err)
			}
			// Run has returned: every answer go-sdk wrote is in got.
			var slowID, cancelledID json.RawMessage
			for _, m := range wireLines(t, sent.String()) {
				switch string(m["method"]) {
				case `"tools/call"`:
					if strings.Contains(string(m["params"]), `"slow"`) {
						slowID = m["id"]
					}
				case `"notifications/cancelled"`:
					var p struct {
						RequestID json.RawMessage `json:"requestId"`
					}
					_ = json.Unmarshal(m["params"], &p)
					cancelledID = p.RequestID
				}
			}
			if slowID == nil || string(slowID) != string(cancelledID) {
				t.Fatalf("the client called slow as %s and cancelled %s:\n%s", slowID, cancelledID, sent.String())
			}
			for _, m := range wireLines(t, got.String()) {
				if _, isRequest := m["method"]; !isRequest && string(m["id"]) == string(slowID) {
					t.Errorf("the cancelled call %s got an answer: %s", slowID, got.String())
				}
			}
		})
	}
}

// TestStdioConnHoldsBackCancelledAnswers, at the connection: the answer to
// a request the client cancelled while it was in flight is not written,
// alone or in a batch (the batch's array leaves it out, and a batch whose
// every answer was cancelled gets none: never an empty array); a
// cancellation of a request already answered, or of an id never sent,
// changes nothing, and an id reused by a later request is answered.
func TestStdioConnHoldsBackCancelledAnswers(t *testing.T) {
	t.Parallel()
	toConn, fromTest := io.Pipe()
	out := &testutil.SyncBuffer{}
	conn := connect(t, toConn, out)
	t.Cleanup(func() { fromTest.Close() })
	send := func(lines ...string) {
		t.Helper()
		for _, l := range lines {
			if _, err := io.WriteString(fromTest, l+"\n"); err != nil {
				t.Fatal(err)
			}
			readN(t, conn, 1)
		}
	}
	call := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call"}` }
	cancelOf := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user"}}`
	}
	answered := func(ids ...float64) {
		t.Helper()
		for _, id := range ids {
			answer(t, conn, &jsonrpc.Request{ID: mustID(t, id)})
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`)
	answered(0)
	send(call("1"), cancelOf("1"), call("2"), cancelOf(`"nobody"`))
	answered(1, 2)
	if _, err := io.WriteString(fromTest, "["+call("3")+","+call("4")+"]\n"); err != nil {
		t.Fatal(err)
	}
	readN(t, conn, 2)
	send(cancelOf("3"))
	answered(3, 4)
	if _, err := io.WriteString(fromTest, "["+call("5")+","+call("6")+"]\n"); err != nil {
		t.Fatal(err)
	}
	readN(t, conn, 2)
	send(cancelOf("5"), cancelOf("6"))
	answered(5, 6)
	send(call("7"))
	answered(7)
	send(cancelOf("7"), call("1")) // too late for 7; 1 is reused
	answered(1)
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`[{"jsonrpc":"2.0","id":4,"result":{}}]`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	}, "\n") + "\n"
	if got := out.String(); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
}
