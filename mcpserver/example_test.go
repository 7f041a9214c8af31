package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// demoClient is a library client for a simulated cluster; a real program
// configures proxmoxsafe.Config from its own settings.
func demoClient(cfg proxmoxsafe.Config) (*proxmoxsafe.Client, func()) {
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	cfg.URL, cfg.Fingerprint = fake.URL, fake.Fingerprint()
	cfg.TokenID, cfg.TokenSecret = proxmoxtest.DefaultTokenID, proxmoxtest.DefaultTokenSecret
	client, err := proxmoxsafe.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	return client, fake.Close
}

// callTool connects an in-memory MCP client to server and calls one tool.
func callTool(server *mcp.Server, name string, args map[string]any) *mcp.CallToolResult {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		log.Fatal(err)
	}
	return res
}

// Embed the Proxmox tools into your own go-sdk server: AddTools registers
// them, Middleware adds what New would (logging, the audit record of a
// schema refusal, panic recovery).
func ExampleAddTools() {
	client, closeFake := demoClient(proxmoxsafe.Config{Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}}})
	defer closeFake()

	server := mcp.NewServer(&mcp.Implementation{Name: "my-server", Version: "v1.0.0"}, nil)
	// ... your own tools ...
	mcpserver.AddTools(server, client, nil)
	server.AddReceivingMiddleware(mcpserver.Middleware(client, nil)...)

	res := callTool(server, mcpserver.ToolNodeStatus, map[string]any{"node": "pve1"})
	fmt.Println("node_status error:", res.IsError)
	// Output:
	// node_status error: false
}

// A standalone server: only the tools the policy enables are listed.
func ExampleNew() {
	client, closeFake := demoClient(proxmoxsafe.Config{})
	defer closeFake()
	server := mcpserver.New(client, &mcpserver.Options{Version: "v1.2.3"})
	_ = server // serve it: server.Run(ctx, &mcp.StdioTransport{})

	for _, t := range mcpserver.Tools(client, nil) {
		if t.Class != "" {
			fmt.Println("mutation tool listed:", t.Name)
		}
	}
	fmt.Println("tools:", len(mcpserver.Tools(client, nil)))
	// Output:
	// tools: 21
}

// askUser is an approver that reaches the MCP client being served: a real
// one would ask the person there (elicitation); this one only shows that
// the request is at hand, then leaves the decision to the phrase.
type askUser struct{}

func (askUser) Name() string { return "ask-user" }

func (askUser) Approve(ctx context.Context, req proxmoxsafe.ApprovalRequest) error {
	if call := mcpserver.RequestFromContext(ctx); call != nil {
		fmt.Println("approving", req.Phrase, "for tool", call.Params.Name)
	}
	return proxmoxsafe.PhraseApprover{}.Approve(ctx, req)
}

// An approver reaches the tool call it decides on.
func ExampleRequestFromContext() {
	client, closeFake := demoClient(proxmoxsafe.Config{
		Policy: proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot},
			Approvals:    map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassSnapshot: {"ask-user"}},
		},
		Approvers: []proxmoxsafe.Approver{askUser{}},
		Audit:     auditlog.New(discard{}, nil),
	})
	defer closeFake()
	res := callTool(mcpserver.New(client, nil), mcpserver.ToolSnapshotGuest, map[string]any{
		"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "before-upgrade",
		"approval": "APPROVE snapshot pve1/qemu/100/before-upgrade",
	})
	fmt.Println("error:", res.IsError)
	// Output:
	// approving APPROVE snapshot pve1/qemu/100/before-upgrade for tool snapshot_guest
	// error: false
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
