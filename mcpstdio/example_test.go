package mcpstdio_test

import (
	"context"
	"log"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpstdio"
)

// A line that is not JSON gets a parse error and the session goes on: the
// ping after it is answered. With go-sdk's own stdio transport the first
// line ends the session. A real server passes os.Stdin and os.Stdout, and
// Run returns nil when the client closes stdin.
func Example() {
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "v0.0.1"}, nil)
	in := strings.NewReader("this is not JSON\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	t := mcpstdio.NewTransport(in, os.Stdout, nil)
	if err := server.Run(context.Background(), t); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON"}}
	// {"jsonrpc":"2.0","id":1,"result":{}}
}
