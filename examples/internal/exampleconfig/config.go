// Package exampleconfig is the configuration the example programs share:
// the simulated cluster of -demo, or a real cluster from the environment.
// It is not part of the module's API.
package exampleconfig

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Load returns the library configuration of an example program named name:
// with demo, an in-process simulated cluster (proxmoxtest.DemoCluster) and a
// temporary audit log, both removed by the returned cleanup; otherwise the
// PVE_* environment and the audit log PROXMOX_SAFE_AUDIT_LOG names. The
// cleanup is nil when err is not.
func Load(demo bool, name string) (proxmoxsafe.Config, func(), error) {
	if demo {
		cluster := proxmoxtest.DemoCluster()
		var nodes []string
		for _, n := range cluster.Nodes {
			nodes = append(nodes, n.Name)
		}
		srv := proxmoxtest.NewServer(cluster)
		audit, err := os.CreateTemp("", name+"-audit-*.jsonl")
		if err != nil {
			srv.Close()
			return proxmoxsafe.Config{}, nil, err
		}
		audit.Close()
		log, err := auditlog.Open(audit.Name(), nil)
		if err != nil {
			srv.Close()
			os.Remove(audit.Name())
			return proxmoxsafe.Config{}, nil, err
		}
		return proxmoxsafe.Config{
				URL:         srv.URL,
				TokenID:     proxmoxtest.DefaultTokenID,
				TokenSecret: proxmoxtest.DefaultTokenSecret,
				Fingerprint: srv.Fingerprint(),
				Policy:      proxmoxsafe.Policy{AllowedNodes: nodes},
				Audit:       log,
			}, func() {
				log.Close()
				os.Remove(audit.Name())
				os.Remove(audit.Name() + ".seal")
				srv.Close()
			}, nil
	}

	cfg := proxmoxsafe.Config{
		URL:         os.Getenv("PVE_URL"),
		TokenID:     os.Getenv("PVE_API_TOKEN_ID"),
		TokenSecret: os.Getenv("PVE_API_TOKEN_SECRET"),
		Fingerprint: os.Getenv("PVE_TLS_FINGERPRINT"),
	}
	if f := os.Getenv("PVE_CA_FILE"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return cfg, nil, fmt.Errorf("PVE_CA_FILE: %w", err)
		}
		cfg.CACertPEM = pem
	}
	for n := range strings.SplitSeq(os.Getenv("PVE_ALLOWED_NODES"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.Policy.AllowedNodes = append(cfg.Policy.AllowedNodes, n)
		}
	}
	path := os.Getenv("PROXMOX_SAFE_AUDIT_LOG")
	if path == "" {
		return cfg, nil, errors.New("PROXMOX_SAFE_AUDIT_LOG is required (or use -demo)")
	}
	// A real deployment should pass a Key kept outside the log (see
	// auditlog.Options); the binary manages one for you.
	log, err := auditlog.Open(path, nil)
	if err != nil {
		return cfg, nil, fmt.Errorf("PROXMOX_SAFE_AUDIT_LOG: %w", err)
	}
	cfg.Audit = log
	return cfg, func() { log.Close() }, nil
}
