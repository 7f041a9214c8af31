// Command minimal is the baseline of bench/compare: the smallest useful
// go-sdk MCP server, with one tool that does what list_guests does at its
// core (one keep-alive GET of /cluster/resources, decoded) and nothing of
// this project's safety layers. Its optional path argument GETs another
// API path instead (e.g. guest_status's /nodes/N/qemu/V/status/current), so
// bench/compare can measure the floor of any go-sdk stdio server for the
// very GET one of our small reads makes; it is still one tool. It serves stdio, or streamable HTTP with
// -http ADDR (printing "url=http://…" on stderr).
//
// Environment: PVE_URL, PVE_API_TOKEN_ID, PVE_API_TOKEN_SECRET, PVE_CA_FILE
// (the fake's certificate). It exists only to be measured against.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listIn struct {
	// Path is an API path below /api2/json to GET instead of
	// /cluster/resources?type=vm.
	Path string `json:"path,omitempty"`
}

type listOut struct {
	// Total is the length of data when it is a list, else 1.
	Total int `json:"total"`
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(os.Getenv("PVE_CA_FILE")); err == nil {
		pool.AppendCertsFromPEM(pem)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}}
	auth := "PVEAPIToken=" + os.Getenv("PVE_API_TOKEN_ID") + "=" + os.Getenv("PVE_API_TOKEN_SECRET")
	base := os.Getenv("PVE_URL") + "/api2/json"

	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "list_guests", Description: "List guests."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
			url := base + "/cluster/resources?type=vm"
			if in.Path != "" {
				url = base + in.Path
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", auth)
			resp, err := hc.Do(req)
			if err != nil {
				return nil, listOut{}, err
			}
			defer resp.Body.Close()
			var body struct {
				Data any `json:"data"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				return nil, listOut{}, err
			}
			if resp.StatusCode != http.StatusOK {
				return nil, listOut{}, fmt.Errorf("GET %s: %s", url, resp.Status)
			}
			total := 1
			if l, ok := body.Data.([]any); ok {
				total = len(l)
			}
			return nil, listOut{Total: total}, nil
		})
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "url=http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	log.Fatal(http.Serve(ln, h))
}
