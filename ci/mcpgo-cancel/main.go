// Command mcpgo-cancel is ci/cancel-smoke.sh's second independent client:
// mark3labs/mcp-go (its own module here, so that the server's go.mod does
// not depend on it) drives the binary in --demo mode over stdio, cancels
// two slow guest_power calls (mcp-go sends notifications/cancelled when a
// call's context ends) and reports whether the server answered them
// anyway. mcp-go drops such answers silently, so the wire is read from a
// tee of the server's stdin and stdout. Exit 1 on any answer to a
// cancelled call, a later call that fails, or a missing notification.
//
//	go run . <server-binary> <protocol version, "" for the newest> <scratch-dir>
//
// Over HTTP mcp-go sends no notifications/cancelled (it ends the call's
// stream instead), so there is nothing of this kind to check there.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	bin, pv, dir := os.Args[1], os.Args[2], os.Args[3]
	script := fmt.Sprintf("tee %s/in.log | %s --demo --log-level error --audit-log %s/audit.jsonl | tee %s/out.log", dir, bin, dir, dir)
	tr := transport.NewStdio("sh", nil, "-c", script)
	var opts []client.ClientOption
	if pv != "" {
		opts = append(opts, client.WithProtocolVersion(pv))
	}
	c := client.NewClient(tr, opts...)
	ctx := context.Background()
	must(c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-cancel", Version: "0"}
	init.Params.ProtocolVersion = pv
	res, err := c.Initialize(ctx, init)
	must(err)
	var cancelled []string
	for _, action := range []string{"shutdown", "start"} {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		req := mcp.CallToolRequest{}
		req.Params.Name = "guest_power"
		req.Params.Arguments = map[string]any{"node": "pve1", "type": "qemu", "vmid": 101, "action": action, "wait": true, "approval": "APPROVE " + action + " pve1/qemu/101"}
		_, err := c.CallTool(cctx, req)
		cancel()
		cancelled = append(cancelled, fmt.Sprint(err))
		time.Sleep(4 * time.Second)
	}
	later := mcp.CallToolRequest{}
	later.Params.Name = "list_guests"
	lr, err := c.CallTool(ctx, later)
	must(err)
	c.Close()
	time.Sleep(300 * time.Millisecond)
	// ids of the guest_power calls, and answers with them
	in, _ := os.ReadFile(dir + "/in.log")
	out, _ := os.ReadFile(dir + "/out.log")
	ids := map[string]bool{}
	notified := 0
	for _, l := range strings.Split(string(in), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		if m.Method == "tools/call" && strings.Contains(string(m.Params), "guest_power") {
			ids[string(m.ID)] = true
		}
		if m.Method == "notifications/cancelled" {
			notified++
		}
	}
	answered := 0
	for _, l := range strings.Split(string(out), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && ids[string(m.ID)] {
			answered++
		}
	}
	fmt.Printf("protocol %s: %d calls cancelled (%q), %d notifications/cancelled sent, %d answered anyway, later call isError=%v\n",
		res.ProtocolVersion, len(ids), cancelled, notified, answered, lr.IsError)
	if answered > 0 || lr.IsError || notified != 2 {
		os.Exit(1)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
