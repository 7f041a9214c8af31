// Command minimal is the baseline of bench/compare: the smallest useful
// go-sdk MCP server, with one tool that does what list_guests does at its
// core (one keep-alive GET of /cluster/resources, decoded) and nothing of
// this project's safety layers. It serves stdio, or streamable HTTP with
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

type listIn struct{}

type listOut struct {
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
	url := os.Getenv("PVE_URL") + "/api2/json/cluster/resources?type=vm"

	s := mcp.NewServer(&mcp.Implementation{Name: "minimal", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "list_guests", Description: "List guests."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ listIn) (*mcp.CallToolResult, listOut, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", auth)
			resp, err := hc.Do(req)
			if err != nil {
				return nil, listOut{}, err
			}
			defer resp.Body.Close()
			var body struct {
				Data []map[string]any `json:"data"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				return nil, listOut{}, err
			}
			return nil, listOut{Total: len(body.Data)}, nil
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
