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

// startupCheckDelay is when the background privilege check begins if the
// client has not listed the tools by then (a variable for tests).
var startupCheckDelay = time.Second

// startupCheckSettle is how long after the first answered tools/list the
// check begins (a variable for tests). A host that only lists the tools and
// disconnects (a probe, a reconnect) is gone by then and never pays for a
// TLS handshake and the permission read; a session that goes on gets the
// check a moment later, in the pause while the model reads the list.
var startupCheckSettle = 250 * time.Millisecond

// startupCheckRun is the check's body (a variable for tests).
var startupCheckRun = startupWarnings

// startupCheck runs the privilege check in the background when serving,
// logging what is missing or dangerous as warnings. It never fails or
// delays startup: it begins startupCheckSettle after the first tools/list
// has been answered (a.listed), or startupCheckDelay after the start if
// none comes, so that it does not compete with answering the client's
// first requests for the CPU of a cold start, and gives up startupCheckTimeout after it
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
		delay := time.NewTimer(startupCheckDelay)
		defer delay.Stop()
		select {
		case <-a.listed:
			settle := time.NewTimer(startupCheckSettle)
			defer settle.Stop()
			select {
			case <-settle.C:
			case <-ctx.Done():
				return
			}
		case <-delay.C:
		case <-ctx.Done():
			return
		}
		checkCtx, cancelCheck := context.WithTimeout(ctx, startupCheckTimeout)
		defer cancelCheck()
		startupCheckRun(checkCtx, a, warn)
	}()
	return cancel, ended
}

// watchFirstList makes srv close a.listed once it has answered its first
// tools/list, which starts the background privilege check.
func (a *app) watchFirstList(srv *mcp.Server) {
	var once sync.Once
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				once.Do(func() { close(a.listed) })
			}
			return res, err
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
