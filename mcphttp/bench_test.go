package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// BenchmarkToolCall is one tools/call of a trivial tool over streamable
// HTTP, client included, through this package's handler (bearer token,
// Origin/Host, body, in-flight, session and JSON-RPC checks) and through
// go-sdk's bare handler: the difference is what the checks cost per call.
//
//	go test ./mcphttp -run '^$' -bench ToolCall -benchmem -count 5
func BenchmarkToolCall(b *testing.B) {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Greets."},
		func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
			return nil, out{Greeting: "hello " + i.Name}, nil
		})
	verifier, err := mcphttp.StaticTokenVerifier(map[string]string{"alice": aliceTok})
	if err != nil {
		b.Fatal(err)
	}
	ours, err := mcphttp.New(server, &mcphttp.Options{TokenVerifier: verifier})
	if err != nil {
		b.Fatal(err)
	}
	bare := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	for _, c := range []struct {
		name    string
		handler http.Handler
	}{{"handler=mcphttp", ours}, {"handler=go-sdk", bare}} {
		b.Run(c.name, func(b *testing.B) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(b.Context(),
				&mcp.StreamableClientTransport{Endpoint: ts.URL + mcphttp.DefaultPath,
					HTTPClient: &http.Client{Transport: bearer{aliceTok, ts.Client().Transport}}},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "bench"}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), params)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ours.Shutdown(ctx)
}
