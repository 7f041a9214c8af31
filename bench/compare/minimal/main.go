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
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/onetool"
)

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
	onetool.Add(s, hc, base, auth, nil)
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
