package mcpstdio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio transport alone, without a server: b.N tools/call lines read
// through Connect and Read, and b.N tool results written through Write.
// Run with
//
//	go test -run '^$' -bench StdioTransport -benchmem -count 6 ./mcpstdio

func BenchmarkStdioTransportRead(b *testing.B) {
	var in bytes.Buffer
	for i := range b.N {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"guest_status","arguments":{"node":"pve1","vmid":%d},"_meta":{"progressToken":"p%d"}}}`+"\n", i+1, 100+i%900, i)
	}
	ctx := context.Background()
	b.ResetTimer()
	conn, err := NewTransport(&in, io.Discard, nil).Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for range b.N {
		msg, err := conn.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "tools/call" {
			b.Fatalf("read %+v", msg)
		}
	}
	// Not read to the end: the end of input waits for answers to the
	// requests, which this benchmark of reading does not write.
}

func BenchmarkStdioTransportWrite(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("result=%dKiB", size>>10), func(b *testing.B) {
			result := toolResult(b, size)
			ctx := context.Background()
			conn, err := NewTransport(strings.NewReader(""), io.Discard, nil).Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			b.SetBytes(int64(len(result)))
			var id int64
			for b.Loop() {
				id++
				if err := conn.Write(ctx, &jsonrpc.Response{ID: mustID(b, float64(id)), Result: result}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// toolResult is a tools/call result as go-sdk marshals it (structured
// content and its text copy) of about size bytes.
func toolResult(tb testing.TB, size int) json.RawMessage {
	tb.Helper()
	type guest struct {
		VMID   int    `json:"vmid"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Node   string `json:"node"`
	}
	var guests []guest
	for i := 0; len(guests)*2*90 < size; i++ {
		guests = append(guests, guest{VMID: 100 + i, Name: fmt.Sprintf("guest-<%d>&\"web\"", i), Status: "running", Node: "pve1"})
	}
	structured := map[string]any{"guests": guests}
	text, err := json.Marshal(structured)
	if err != nil {
		tb.Fatal(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: structured}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: mustID(tb, 1.0), Result: mustMarshal(tb, res)})
	if err != nil {
		tb.Fatal(err)
	}
	var wire struct{ Result json.RawMessage }
	if err := json.Unmarshal(out, &wire); err != nil {
		tb.Fatal(err)
	}
	return wire.Result
}

func mustMarshal(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
