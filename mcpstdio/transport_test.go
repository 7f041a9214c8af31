package mcpstdio

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
)

// TestNewTransportOptions: nil options and zero options serve alike and
// log nothing anywhere; Options.Logger gets one warning with the error
// code per line the transport answers itself, and nothing for valid ones.
func TestNewTransportOptions(t *testing.T) {
	t.Parallel()
	in := "not json\n" + `{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/x"}` + "\n"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	for _, tc := range []struct {
		name string
		opts *Options
	}{
		{"nil", nil},
		{"zero", &Options{}},
		{"logger", &Options{Logger: logger}},
	} {
		out := &testutil.SyncBuffer{}
		conn, err := NewTransport(strings.NewReader(in), out, tc.opts).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, conn); len(got) != 1 || got[0] != "notifications/x <nil>" {
			t.Errorf("%s: read %q", tc.name, got)
		}
		conn.Close()
		if got, want := errorAnswers(t, out.String()), []string{"1 -32600", "null -32700"}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: answers %q, want %q", tc.name, got, want)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 || !strings.Contains(logs.String(), "code=-32700") || !strings.Contains(logs.String(), "code=-32600") {
		t.Errorf("the logger got %d warnings, want one per invalid line with its code:\n%s", n, logs.String())
	}
}

// TestNewTransportNeedsReaderAndWriter: a nil reader or writer is a
// programming error, reported at once rather than at the first line.
func TestNewTransportNeedsReaderAndWriter(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"reader": func() { NewTransport(nil, io.Discard, nil) },
		"writer": func() { NewTransport(strings.NewReader(""), nil, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic without a %s", name)
				}
			}()
			f()
		}()
	}
}

// TestTransportServesServer: an mcp.Server run over the transport serves a
// go-sdk client on the other end of two pipes (initialize, a tool call),
// and Run returns nil once the client goes away, as the binary's exit 0
// on a closed stdin expects.
func TestTransportServesServer(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	type echo struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echo) (*mcp.CallToolResult, echo, error) {
		return nil, in, nil
	})
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		ran <- server.Run(t.Context(), NewTransport(toServer, fromServer, nil))
		fromServer.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	if got, ok := res.StructuredContent.(map[string]any); !ok || got["text"] != "hi" {
		t.Errorf("echo returned %#v", res.StructuredContent)
	}
	cs.Close() // closes the client's writer: the server's end of input
	if err := <-ran; err != nil {
		t.Errorf("Run after the client closed: %v, want nil", err)
	}
}
