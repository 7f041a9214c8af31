package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

// cmdDoctor checks a setup and prints a report.
const cmdDoctor = settings.CmdDoctor

// startupCheckTimeout bounds the background privilege check.
const startupCheckTimeout = 5 * time.Second

// startupCheckRun is the check's body (a variable for tests).
var startupCheckRun = startupWarnings

// startupCheck runs the privilege check in the background when serving,
// logging what is missing or dangerous as warnings. It begins when the
// first tools/call arrives (a.called, watchFirstCall) and runs alongside
// that call, never before it and on no timer: a host spawns every
// configured server and lists its tools, and many then sit idle for the
// whole session; such a server makes no connection to Proxmox and holds
// no TLS state. The call needs its own connection anyway, so the check's
// handshake is paid at the same moment, and its warnings come with the
// first use (`proxmox-safe-mcp doctor` checks a setup on demand). It
// never fails or delays a call and gives up startupCheckTimeout after it
// began. Demo mode skips it: the simulated cluster needs no warning.
//
// stop cancels the check and returns at once: the check only reads and
// logs, so there is nothing to finish, and an exiting server must not wait
// for a TLS handshake in progress (it made every exit after a prompt stdin
// close several milliseconds slower). done is closed once the
// check's goroutine has ended (tests wait for it).
func startupCheck(ctx context.Context, a *app, cfg *settings.Config, warn *slog.Logger) (stop func(), done <-chan struct{}) {
	ended := make(chan struct{})
	if cfg.Demo {
		close(ended)
		return func() {}, ended
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(ended)
		select {
		case <-a.called:
		case <-ctx.Done():
			return
		}
		checkCtx, cancelCheck := context.WithTimeout(ctx, startupCheckTimeout)
		defer cancelCheck()
		startupCheckRun(checkCtx, a, warn)
	}()
	return cancel, ended
}

// watchFirstCall makes srv, when its first tools/call arrives and before
// the call is handled, close a.called, which starts the background
// privilege check beside it, and start the audit logs' verification where
// openAudit held it back (over stdio; a record needed earlier starts it
// itself, and over HTTP it began at the start).
func (a *app) watchFirstCall(srv *mcp.Server) {
	logs := a.auditLogs()
	var once sync.Once
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				once.Do(func() {
					close(a.called)
					for _, l := range logs {
						l.StartVerification()
					}
				})
			}
			return next(ctx, method, req)
		}
	})
}

// startupWarnings is startupCheck's body, synchronous for tests.
func startupWarnings(ctx context.Context, a *app, warn *slog.Logger) {
	if len(a.members) == 0 {
		doctor.StartupWarnings(ctx, a.client, a.opts, warn)
		return
	}
	for _, m := range a.members {
		doctor.StartupWarnings(ctx, m.app.client, m.app.opts, warn.With(slog.String("cluster", m.cfg.ClusterName)))
	}
}

// doctorCommand is the doctor command: internal/doctor checks the client this
// configuration built.
func doctorCommand(ctx context.Context, a *app, cfg *settings.Config, w io.Writer) int {
	if len(a.members) == 0 {
		return doctor.Run(ctx, doctor.Setup{Client: a.client, Options: a.opts, Trust: a.trust, Config: cfg,
			Version: versionString(), GrantDir: serverGrantDir(cfg), AuditKey: readAuditKey}, w)
	}
	// A clusters file: every cluster is checked in turn, and the end says
	// which failed; the exit code is the worst. With --json the reports
	// are one document (clustersDoctorJSON), as one cluster's is.
	worst := exitOK
	var failed []string
	var doc clustersDoctorJSON
	for _, m := range a.members {
		out := w
		var report bytes.Buffer
		if cfg.JSON {
			out = &report
		} else {
			fmt.Fprintf(w, "== cluster %s\n", m.cfg.ClusterName)
		}
		code := doctor.Run(ctx, doctor.Setup{Client: m.app.client, Options: m.app.opts, Trust: m.app.trust, Config: m.cfg,
			Version: versionString(), GrantDir: serverGrantDir(m.cfg), AuditKey: readAuditKey}, out)
		if cfg.JSON {
			r := json.RawMessage(bytes.TrimSpace(report.Bytes()))
			if !json.Valid(r) { // doctor's one line about a client it cannot check
				r, _ = json.Marshal(map[string]any{"result": string(r), "exit_code": code})
			}
			doc.Clusters = append(doc.Clusters, clusterDoctorJSON{Name: m.cfg.ClusterName, Report: r})
		}
		switch code {
		case exitOK:
		case doctor.ExitDangerous: // working, with warnings
			if worst == exitOK {
				worst = code
			}
		default:
			failed = append(failed, m.cfg.ClusterName)
			if worst == exitOK || worst == doctor.ExitDangerous {
				worst = code
			}
		}
	}
	if cfg.JSON {
		doc.OK, doc.Failed, doc.ExitCode = len(failed) == 0, failed, worst
		if doc.Failed == nil {
			doc.Failed = []string{}
		}
		writeJSON(w, doc) // cli.go
	} else {
		if len(failed) == 0 {
			fmt.Fprintf(w, "== all %d clusters work (see each one's warnings)\n", len(a.members))
		} else {
			fmt.Fprintf(w, "== %d of %d clusters failed: %s\n", len(failed), len(a.members), strings.Join(failed, ", "))
		}
	}
	return worst
}

// clustersDoctorJSON is `doctor --json` with a clusters file: one
// document holding each cluster's report (what `doctor --json` prints for
// one cluster), which failed, and the exit code the command returns.
type clustersDoctorJSON struct {
	Clusters []clusterDoctorJSON `json:"clusters"`
	// OK: no cluster failed (a cluster working with dangerous privileges
	// has not failed; its report and exit_code 3 say so).
	OK       bool     `json:"ok"`
	Failed   []string `json:"failed"`
	ExitCode int      `json:"exit_code"`
}

type clusterDoctorJSON struct {
	Name   string          `json:"name"`
	Report json.RawMessage `json:"report"`
}
