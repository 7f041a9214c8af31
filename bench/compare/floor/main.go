// Command floor is the second cold-start baseline (docs/PERFORMANCE.md): the minimal
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
// Built with -tags floorimports it also links and initializes every
// package the command imports, and uses none (imports.go); bench/coldstart
// builds it as floor-imports.
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
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/onetool"
)

// config is what the floor reads from its environment, checked once at
// start by the validator (as a real server checks its configuration).
type config struct {
	URL         string `json:"url" validate:"required,url,startswith=https://"`
	TokenID     string `json:"token_id" validate:"required,max=256"`
	TokenSecret string `json:"token_secret" validate:"required,max=256"`
	Fingerprint string `json:"fingerprint" validate:"omitempty,hexfp"`
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
	onetool.Add(s, hc, base, auth, v.Struct)
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
