// Command proxmox-safe-mcp is a safety-first MCP server for Proxmox VE.
//
// It serves the tools of package mcpserver over stdio (the default), and
// has two direct commands for shell users: "tools" lists the tools the
// configuration exposes and "call" runs one tool through the same MCP code
// path and prints its result. With --demo everything runs against an
// in-process simulated cluster, so it can be tried without Proxmox:
//
//	go run ./cmd/proxmox-safe-mcp --demo call list_guests
//
// Configuration comes from flags and PVE_* / PROXMOX_SAFE_* environment
// variables; see --help and docs/CONFIGURATION.md. Stdout carries only MCP
// JSON-RPC (serve) or the tool result (call); logs go to stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpstdio"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// when empty the module version from the build info is used.
var version string

// Exit codes (also in usage and docs/CONFIGURATION.md; doctor's 3 is in
// doctor.go).
const (
	exitOK        = 0
	exitToolError = 1 // call: the tool returned isError; serve: a runtime failure
	exitUsage     = 2 // bad flags, environment or configuration
	// exitWaitTimeout: call with "wait": true, and the task had not
	// finished (or could not be confirmed) when the wait ended; it may
	// still complete.
	exitWaitTimeout = 4
	// exitWaitFailed: call with "wait": true, and the task failed.
	exitWaitFailed = 5
)

func main() {
	// The signals are never let go (no stop): os.Exit follows, and
	// restoring their default handling first is a round trip through the
	// signal goroutine that every exit after a closed stdin waited for.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdin, os.Stdout, os.Stderr)
	for _, h := range exitHooks {
		h()
	}
	os.Exit(code)
}

// exitHooks run just before main exits. Only a benchmark build sets them
// (profile_hook.go, build tag benchprofile); the shipped binary has none.
var exitHooks []func()

// run is main without the process: tests call it with their own streams and
// environment.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == cmdAudit { // needs no Proxmox configuration (audit_cmd.go)
		return auditCommand(args[1:], lookup, stdout, stderr)
	}
	if isGrantCommand(args) { // needs no Proxmox configuration (approve.go)
		return grantCommand(args, lookup, stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "completion" { // needs no configuration
		return completionCommand(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == cmdHealthcheck { // needs no configuration (http.go)
		return healthcheck(ctx, args[1:], lookup, stdout, stderr)
	}
	cfg, err := settings.Parse(args, lookup)
	switch {
	case errors.Is(err, settings.ErrHelp):
		if !settings.CommandUsage(stdout, cfg.Command) {
			settings.Usage(stdout)
		}
		return exitOK
	case err != nil && cfg != nil && cfg.Command == cmdDoctor:
		// doctor names every missing setting at once, not one per run.
		lines := settings.Missing(cfg)
		if !slices.Contains(lines, err.Error()) {
			lines = append([]string{err.Error()}, lines...)
		}
		for _, l := range lines {
			fmt.Fprintln(stderr, "proxmox-safe-mcp: "+l)
		}
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+err.Error())
		return exitUsage
	}
	if cfg.Version {
		fmt.Fprintln(stdout, "proxmox-safe-mcp", versionString())
		return exitOK
	}

	logger := slog.New(logHandler(cfg, stderr, cfg.LogLevel))
	// Startup warnings (insecure TLS, a loose secret file) are shown even
	// when the CLI commands' quieter default level would hide them.
	warn := slog.New(logHandler(cfg, stderr, min(cfg.LogLevel, slog.LevelWarn)))
	for _, w := range cfg.Warnings {
		warn.Warn(w)
	}
	a, err := setup(cfg, logger, warn, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+err.Error())
		return exitUsage
	}
	defer a.close()

	switch cfg.Command {
	case settings.CmdTools:
		return listTools(a, cfg, stdout, stderr)
	case settings.CmdCall:
		return callTool(ctx, a, cfg, stdout, stderr)
	case cmdDoctor:
		return doctorCommand(ctx, a, cfg, stdout)
	default:
		// Privileges are checked in the background, from the first tool
		// call on, and only logged: an idle server never connects, a slow
		// or unreachable Proxmox delays or fails nothing, and an exiting
		// server does not wait for it (doctor.go).
		stopCheck, _ := startupCheck(ctx, a, cfg, warn)
		defer stopCheck()
		defer reportAuditVerification(ctx, a.audit, cfg.AuditLog, warn)() // audit_setup.go
		if cfg.HTTP.Addr != "" {
			return serveHTTP(ctx, a, cfg, warn, stderr)
		}
		return serve(ctx, a, stdin, stdout)
	}
}

// serve speaks MCP on stdin/stdout until stdin closes (exit 0) or a signal
// cancels ctx (exit 0).
func serve(ctx context.Context, a *app, stdin io.Reader, stdout io.Writer) int {
	srv := a.server()
	a.watchFirstCall(srv) // starts the privilege check and the audit log's verification (doctor.go)
	a.instrument(srv)     // --metrics-addr (metrics.go)
	// Not mcp.StdioTransport: one invalid line would end the session.
	t := mcpstdio.NewTransport(stdin, stdout, &mcpstdio.Options{Logger: a.log})
	a.log.Info("serving MCP on stdio", slog.String("version", versionString()))
	err := srv.Run(ctx, t)
	switch {
	case err == nil:
		a.log.Info("client closed stdin; exiting")
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		a.log.Info("signal received; exiting")
	default:
		a.log.Error("MCP session failed", slog.Any("error", err))
		return exitToolError
	}
	return exitOK
}

// versionString is the -X override, else the module version (a tag or
// pseudo-version when installed with `go install …@version`), else
// "(devel)" plus the VCS revision when the build recorded one.
//
// It is computed once: a start asks for it several times (the log line,
// the MCP implementation, the User-Agent), and each debug.ReadBuildInfo
// parses the module list embedded in the binary again.
var versionString = sync.OnceValue(func() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "(devel)"
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
})

// logHandler writes stderr's log lines as text, or as one JSON object per
// line with --log-format json.
func logHandler(cfg *settings.Config, stderr io.Writer, level slog.Level) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogJSON {
		return slog.NewJSONHandler(stderr, opts)
	}
	return slog.NewTextHandler(stderr, opts)
}

// completionCommand prints the shell completion script for bash, zsh or
// fish; the tool names are every tool this version has, since which are
// offered depends on a configuration the shell does not know.
func completionCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "--help" || args[0] == "-h" {
		w, code := stderr, exitUsage
		if len(args) == 1 {
			w, code = stdout, exitOK
		}
		fmt.Fprintf(w, "Usage: proxmox-safe-mcp completion bash|zsh|fish\n\n"+
			"Prints a completion script for the shell. Load it in the running shell with\n"+
			"  source <(proxmox-safe-mcp completion bash)          # bash, zsh: the same with zsh\n"+
			"  proxmox-safe-mcp completion fish | source           # fish\n"+
			"or install it where the shell looks, e.g.\n"+
			"  proxmox-safe-mcp completion bash > /etc/bash_completion.d/proxmox-safe-mcp\n"+
			"  proxmox-safe-mcp completion fish > ~/.config/fish/completions/proxmox-safe-mcp.fish\n")
		return code
	}
	var tools []string
	for _, t := range mcpserver.Tools(nil, nil) {
		tools = append(tools, t.Name)
	}
	if err := settings.Completion(stdout, args[0], tools); err != nil {
		fmt.Fprintln(stderr, "proxmox-safe-mcp: "+err.Error())
		return exitUsage
	}
	return exitOK
}
