// Command floor is the second cold-start baseline of issue 14: the minimal
// go-sdk server of ../minimal (one tool, one keep-alive GET), plus what any
// server meeting this project's mandate must link and do at start with its
// fixed dependencies, and nothing of this project:
//
//   - a validator/v10 instance configured as proxmoxsafe configures its own
//     (required structs, JSON field names, one custom tag), checking the
//     configuration struct once at start and the tool's input on each call;
//   - a go-cleanhttp pooled transport with a crypto/tls configuration (CA
//     pool, TLS 1.2 minimum, the server certificate pinned by its SHA-256
//     fingerprint), which does not connect before the first call;
//   - a log/slog text logger on stderr, one line at start.
//
// So floor / minimal is what the mandated dependencies cost a cold start,
// and ours / floor what this project adds on top. It serves stdio only.
// Built with -tags floornovalidator it leaves the validator out (and checks
// nothing), which shows what validator/v10 alone costs:
//
//	go build -o /tmp/floor ./bench/compare/floor
//	go build -tags floornovalidator -o /tmp/floor-novalidator ./bench/compare/floor
//	go run ./bench/coldstart -runs 101 -rss /tmp/minimal /tmp/floor-novalidator /tmp/floor
//
// Environment: PVE_URL, PVE_API_TOKEN_ID, PVE_API_TOKEN_SECRET, PVE_CA_FILE,
// PVE_TLS_FINGERPRINT (hex, colons allowed). It exists only to be measured
// against.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// config is what the floor reads from its environment, checked once at
// start by the validator (as a real server checks its configuration).
type config struct {
	URL         string `json:"url" validate:"required,url,startswith=https://"`
	TokenID     string `json:"token_id" validate:"required,max=256"`
	TokenSecret string `json:"token_secret" validate:"required,max=256"`
	Fingerprint string `json:"fingerprint" validate:"omitempty,hexfp"`
}

type listIn struct {
	// Path is an API path below /api2/json to GET instead of
	// /cluster/resources?type=vm.
	Path string `json:"path,omitempty" validate:"omitempty,startswith=/,max=512"`
}

type listOut struct {
	// Total is the length of data when it is a list, else 1.
	Total int `json:"total"`
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	v := newValidator()
	cfg := config{
		URL: os.Getenv("PVE_URL"), TokenID: os.Getenv("PVE_API_TOKEN_ID"),
		TokenSecret: os.Getenv("PVE_API_TOKEN_SECRET"), Fingerprint: os.Getenv("PVE_TLS_FINGERPRINT"),
	}
	if err := v.Struct(cfg); err != nil {
		log.Error("invalid configuration", slog.Any("error", err))
		os.Exit(2)
	}
	hc, err := newClient(cfg, os.Getenv("PVE_CA_FILE"))
	if err != nil {
		log.Error("invalid configuration", slog.Any("error", err))
		os.Exit(2)
	}
	auth := "PVEAPIToken=" + cfg.TokenID + "=" + cfg.TokenSecret
	base := cfg.URL + "/api2/json"

	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "list_guests", Description: "List guests."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
			if err := v.Struct(in); err != nil {
				return nil, listOut{}, err
			}
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
	log.Info("serving MCP on stdio")
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Error("MCP session failed", slog.Any("error", err))
		os.Exit(1)
	}
	log.Info("client closed stdin; exiting")
}

// newClient is a go-cleanhttp pooled client whose TLS configuration trusts
// caFile and, with a fingerprint, only the certificate it names. Nothing
// connects until the first request.
func newClient(cfg config, caFile string) (*http.Client, error) {
	pool := x509.NewCertPool()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool.AppendCertsFromPEM(pem)
	}
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cfg.Fingerprint != "" {
		want, _ := hex.DecodeString(strings.ReplaceAll(cfg.Fingerprint, ":", ""))
		tc.InsecureSkipVerify = true // replaced by the pin below
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no server certificate")
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if !bytes.Equal(got[:], want) {
				return errors.New("server certificate does not match the pinned fingerprint")
			}
			return nil
		}
	}
	tr := cleanhttp.DefaultPooledTransport()
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr}, nil
}
