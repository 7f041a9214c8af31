package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/demo"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

// app is everything the commands share: the library client, the adapter
// options and what must be closed on exit.
type app struct {
	client  *proxmoxsafe.Client
	opts    *mcpserver.Options
	log     *slog.Logger
	closers []func()
	// trust is how the Proxmox certificate is verified, for doctor.
	trust doctor.Trust
	// audit is the audit log file, if one was opened.
	audit *auditlog.Log
	// called is closed when the server's first tools/call arrives
	// (watchFirstCall, doctor.go).
	called chan struct{}
	// metrics is --metrics-addr's listener (metrics.go); nil when off.
	metrics *metrics
	// members are the clusters of a clusters file, each set up as a
	// one-cluster app of its own (client is then the first's); nil
	// without a clusters file.
	members []member
}

// member is one cluster of a clusters file.
type member struct {
	cfg *settings.Config
	app *app
}

// clients are the clients the server serves: the clusters file's, else
// the one.
func (a *app) clients() []*proxmoxsafe.Client {
	if len(a.members) == 0 {
		return []*proxmoxsafe.Client{a.client}
	}
	out := make([]*proxmoxsafe.Client, len(a.members))
	for i, m := range a.members {
		out[i] = m.app.client
	}
	return out
}

// server builds the MCP server: one cluster's (mcpserver.New), or with a
// clusters file of several the fleet's (every tool takes cluster).
func (a *app) server() *mcp.Server {
	return mcpserver.NewFleet(a.clients(), a.opts)
}

// setupClusters sets up every cluster of the clusters file as a
// one-cluster app (its own audit log, locks, approvers) and serves them
// together. An error names the cluster.
func setupClusters(cfg *settings.Config, logger, warn *slog.Logger, stderr io.Writer) (*app, error) {
	a := &app{log: logger, called: make(chan struct{})}
	if cfg.MetricsAddr != "" && cfg.Command == settings.CmdServe {
		// One listener for the process; each cluster's requests are
		// counted there with its name (metrics.go).
		m, err := newMetrics(cfg.MetricsAddr)
		if err != nil {
			return nil, settings.Errorf("PROXMOX_SAFE_METRICS_ADDR (--metrics-addr): %v", err)
		}
		a.metrics = m
		a.closers = append(a.closers, m.close)
	}
	for _, cc := range cfg.Clusters {
		cc.MetricsAddr = ""
		sub, err := setupCluster(cc, logger.With(slog.String("cluster", cc.ClusterName)), warn.With(slog.String("cluster", cc.ClusterName)), stderr, a.metrics)
		if err != nil {
			a.close()
			return nil, settings.Errorf("%s: cluster %s: %v", settings.ClustersSetting, cc.ClusterName, err)
		}
		a.closers = append(a.closers, sub.close)
		a.members = append(a.members, member{cfg: cc, app: sub})
	}
	first := a.members[0].app
	a.client, a.opts, a.trust, a.audit = first.client, first.opts, first.trust, first.audit
	return a, nil
}

// instrument adds the metrics' counters to a server about to serve.
func (a *app) instrument(srv *mcp.Server) {
	if a.metrics != nil {
		a.metrics.instrument(srv, a.clients())
		a.metrics.serve(a.log)
	}
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// setup builds the client from cfg. Every error is a configuration error
// that names the variable to fix.
func setup(cfg *settings.Config, logger, warn *slog.Logger, stderr io.Writer) (*app, error) {
	if len(cfg.Clusters) > 0 {
		return setupClusters(cfg, logger, warn, stderr)
	}
	return setupCluster(cfg, logger, warn, stderr, nil)
}

// setupCluster is setup of one cluster. shared, for a cluster of a
// clusters file, are the process's metrics, which count its requests
// under its name; nil: its own, when --metrics-addr asks for them.
func setupCluster(cfg *settings.Config, logger, warn *slog.Logger, stderr io.Writer, shared *metrics) (*app, error) {
	a := &app{log: logger, called: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			a.close()
		}
	}()

	if err := cfg.CheckProfile(); err != nil { // Parse checked it already
		return nil, err
	}
	classes := cfg.Classes()
	var err error
	var lib proxmoxsafe.Config
	if cfg.Demo {
		var closers []func()
		lib, closers, err = demo.Start(cfg, versionString(), stderr)
		a.closers = append(a.closers, closers...)
		if err != nil {
			return nil, err
		}
	} else {
		lib = proxmoxsafe.Config{
			URL:                cfg.URL,
			TokenID:            cfg.TokenID,
			TokenSecret:        cfg.TokenSecret.Reveal(),
			Username:           cfg.Username,
			Password:           cfg.Password.Reveal(),
			Realm:              cfg.Realm,
			Fingerprint:        cfg.Fingerprint,
			InsecureSkipVerify: cfg.TLSInsecure,
			AllowInsecureHTTP:  cfg.AllowInsecureHTTP,
			Policy:             proxmoxsafe.Policy{AllowedNodes: cfg.AllowedNodes},
		}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, settings.Errorf("PVE_CA_FILE (--ca-file): %v", keyfile.PathError(err))
			}
			lib.CACertPEM = pem
		}
	}
	a.trust = doctor.Trust{Pin: lib.Fingerprint, CAPEM: lib.CACertPEM, CAFile: cfg.CAFile, Insecure: lib.InsecureSkipVerify} // for doctor
	lib.Policy.Classes = classes
	lib.Policy.ReadOnly = cfg.ReadOnly
	lib.Policy.Approvals = cfg.Approvals
	if lib.Approvers, err = approvers(cfg, classes, stderr); err != nil { // approvals.go
		return nil, err
	}
	settings.ApplyProtect(&lib.Policy, cfg.Protect) // after Approvals: it fills the responder class's default
	lib.Policy.ConfigKeys = cfg.ConfigKeys
	lib.Logger = logger
	lib.MaxWait = cfg.MaxWait
	lib.Health = cfg.Health
	lib.UserAgent = "proxmox-safe-mcp/" + versionString()
	lib.LockDir = cfg.LockDir
	lib.ClusterName = cfg.ClusterName // a clusters file's name; "" from the environment

	switch {
	case cfg.AuditLog != "" && !settings.SendsNoMutation(cfg.Command):
		al, closeAudit, err := openAudit(cfg, stderr) // audit_setup.go
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, closeAudit)
		lib.Audit, a.audit = al, al
	case settings.SendsNoMutation(cfg.Command):
		// "tools" never runs a tool; a sink that refuses keeps the library's
		// fail-closed rule without asking for an audit log just to list.
		lib.Audit = refusingSink{}
	}

	switch {
	case shared != nil:
		name := cfg.ClusterName
		lib.OnRequest = func(s proxmoxsafe.RequestStats) { shared.upstream(name, s) }
	case cfg.MetricsAddr != "" && cfg.Command == settings.CmdServe:
		m, err := newMetrics(cfg.MetricsAddr)
		if err != nil {
			return nil, settings.Errorf("PROXMOX_SAFE_METRICS_ADDR (--metrics-addr): %v", err)
		}
		a.metrics = m
		a.closers = append(a.closers, m.close)
		lib.OnRequest = func(s proxmoxsafe.RequestStats) { m.upstream("", s) }
	}
	client, err := proxmoxsafe.New(lib)
	if err != nil {
		return nil, cfg.LibraryError(err)
	}
	if len(cfg.AllowedNodes) == 0 && !cfg.Demo {
		warn.Warn("PVE_ALLOWED_NODES is empty: node-targeted reads are refused and the mutation tools are not offered; set it to the nodes this server may act on")
	}
	if from := cfg.Source("PVE_TLS_INSECURE"); cfg.TLSInsecure && from != "PVE_TLS_INSECURE" {
		// Always: the library's own warning cannot name the alias the user wrote.
		warn.Warn(from + " turns certificate verification off (it is the alias of PVE_TLS_INSECURE=true): the Proxmox certificate is NOT verified; pin it with PVE_TLS_FINGERPRINT instead (doctor prints it), or use PVE_CA_FILE")
	} else if cfg.TLSInsecure && cfg.LogLevel > slog.LevelWarn { // else the library already warned
		warn.Warn("PVE_TLS_INSECURE is set: the Proxmox certificate is NOT verified; prefer PVE_TLS_FINGERPRINT or PVE_CA_FILE")
	}
	if cfg.AllowInsecureHTTP && strings.HasPrefix(cfg.URL, "http://") {
		warn.Warn("PVE_ALLOW_INSECURE_HTTP is set: the API token crosses the network in clear text")
	}
	a.client = client
	a.opts = &mcpserver.Options{
		Version:   versionString(),
		Logger:    logger,
		ReadOnly:  cfg.ReadOnly,
		Selection: cfg.Selection,
	}
	ok = true
	return a, nil
}

// refusingSink is the audit sink of "tools": it fails every record, so any
// mutation would be refused before reaching Proxmox.
type refusingSink struct{}

func (refusingSink) Record(context.Context, proxmoxsafe.AuditRecord) error {
	return errors.New("no audit log is configured (PROXMOX_SAFE_AUDIT_LOG)")
}
