package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/demo"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// The operator's grant commands. They need no Proxmox settings: only the
// grant directory, which the server and these commands find the same way
// (grantDirFrom).
const (
	cmdApprove = "approve"
	cmdDeny    = "deny"
	cmdGrants  = "grants"
)

const grantUsage = `Usage:
  proxmox-safe-mcp approve CODE   show the plan, confirm on the terminal, approve
  proxmox-safe-mcp deny CODE      deny a pending grant
  proxmox-safe-mcp grants list    list grants (pending, approved, denied, used)
  proxmox-safe-mcp --demo approve CODE (also deny, grants list): the demo's grants

The grant directory is PROXMOX_SAFE_GRANT_DIR, else "grants" beside
PROXMOX_SAFE_AUDIT_LOG, else $XDG_STATE_HOME/proxmox-safe-mcp/grants: the
same one the server uses. With --demo it is PROXMOX_SAFE_GRANT_DIR, else
the demo's own $XDG_STATE_HOME/proxmox-safe-mcp/demo/grants. The operator
named in the audit log is the login name of the user running approve or
deny.
`

// isGrantCommand reports whether args are approve, deny or grants, alone
// or after --demo.
func isGrantCommand(args []string) bool {
	if len(args) > 0 && args[0] == "--demo" {
		args = args[1:]
	}
	return len(args) > 0 && (args[0] == cmdApprove || args[0] == cmdDeny || args[0] == cmdGrants)
}

// grantDirFrom finds the grant directory from the environment, as the
// server derives it from the same settings (serverGrantDir): the audit
// log defaults to the one a server would use. For the demo, the demo's
// own directory (internal/demo) unless PROXMOX_SAFE_GRANT_DIR is set.
func grantDirFrom(lookup func(string) (string, bool), demo bool) string {
	explicit, _ := lookup("PROXMOX_SAFE_GRANT_DIR")
	if explicit = strings.TrimSpace(explicit); demo && explicit == "" {
		return settings.DemoGrantDir(lookup)
	}
	auditLog, _ := lookup("PROXMOX_SAFE_AUDIT_LOG")
	auditLog = strings.TrimSpace(auditLog)
	if d := settings.StateDir(lookup); auditLog == "" && d != "" {
		auditLog = filepath.Join(d, settings.DefaultAuditLogName)
	}
	return grantDirFor(explicit, auditLog)
}

// grantDirFor is the one rule the server and the approve, deny and grants
// commands share: PROXMOX_SAFE_GRANT_DIR, else "grants" beside the audit
// log; "" when neither is known.
func grantDirFor(grantDir, auditLog string) string {
	if grantDir != "" || auditLog == "" {
		return grantDir
	}
	return filepath.Join(filepath.Dir(auditLog), "grants")
}

// grantCommand runs approve, deny and grants list.
func grantCommand(args []string, lookup func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer) int {
	demo := args[0] == "--demo"
	if demo {
		args = args[1:]
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "proxmox-safe-mcp %s: %s\n", args[0], fmt.Sprintf(format, a...))
		return exitUsage
	}
	if slices.ContainsFunc(args[1:], isHelpFlag) {
		fmt.Fprint(stdout, grantUsage)
		return exitOK
	}
	if len(args) != 2 || (args[0] == cmdGrants && args[1] != "list") || strings.HasPrefix(args[1], "-") {
		fmt.Fprint(stderr, grantUsage)
		return exitUsage
	}
	dir := grantDirFrom(lookup, demo)
	if dir == "" {
		return fail("no grant directory: set PROXMOX_SAFE_GRANT_DIR (or HOME / XDG_STATE_HOME)")
	}
	store, err := grant.Open(dir, nil)
	if err != nil {
		return fail("%v", err)
	}
	if args[0] == cmdGrants {
		return listGrants(store, stdout, stderr)
	}
	code := args[1]
	g, err := store.Get(code)
	if errors.Is(err, grant.ErrNotFound) {
		hint := ""
		if !demo {
			hint = " (a grant the demo asked for: proxmox-safe-mcp --demo " + args[0] + " CODE)"
		}
		return fail("%v in the grant directory %s%s; nothing was changed", err, dir, hint)
	}
	if err != nil {
		return fail("%v; nothing was changed", err)
	}
	printPlan(stdout, g)
	operator := operatorName(lookup)
	approve := args[0] == cmdApprove
	if approve {
		fmt.Fprintf(stdout, "Type the code %s again to approve (anything else cancels): ", g.Code)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if strings.ToUpper(strings.TrimSpace(line)) != g.Code {
			fmt.Fprintln(stdout)
			fmt.Fprintln(stderr, "proxmox-safe-mcp approve: not confirmed; nothing was changed")
			return exitToolError
		}
	}
	if g, err = store.Decide(code, approve, operator); err != nil {
		return fail("%v", err)
	}
	if approve {
		fmt.Fprintf(stdout, "Approved %s as %s. The same call, repeated unchanged before %s, runs once.\n", g.Code, operator, g.Expires.Local().Format(grant.TimeFormat))
	} else {
		fmt.Fprintf(stdout, "Denied %s as %s.\n", g.Code, operator)
	}
	return exitOK
}

// printPlan shows what approving the grant covers: every part of its
// binding (grant.Grant.Request), from the grant's own fields.
func printPlan(w io.Writer, g grant.Grant) {
	req := g.Request()
	fmt.Fprintf(w, "Grant %s (%s)\n", g.Code, g.Status)
	fmt.Fprintf(w, "  Cluster: %s\n", orUnknown(req.Cluster.String()))
	fmt.Fprintf(w, "  Action:  %s\n", g.Action)
	fmt.Fprintf(w, "  Target:  %s\n", g.TargetLabel())
	if len(g.Params) > 0 {
		fmt.Fprintf(w, "  Params:  %s\n", strings.Join(g.Params, " "))
	}
	fmt.Fprintf(w, "  State:   %s\n", g.State)
	fmt.Fprintf(w, "  Effect:  approving will %s\n", g.Effect)
	if g.Risk != "" {
		fmt.Fprintf(w, "  Risk:    %s\n", g.Risk)
	}
	if r := req.Request(); r != "" {
		// The one request the call will send: what the operator approves.
		r, _ = sanitize.CapLine(r, 1024)
		fmt.Fprintf(w, "  Request: %s\n", r)
	}
	fmt.Fprintf(w, "  Asked:   %s, expires %s\n", g.Created.Local().Format(grant.TimeFormat), g.Expires.Local().Format(grant.TimeFormat))
	if !g.Shows() {
		fmt.Fprintln(w, "  Note:    this grant does not bind what it shows (an earlier version wrote it, or it was edited): it cannot be approved; repeat the call for a new code")
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

func listGrants(store *grant.Store, stdout, stderr io.Writer) int {
	grants, err := store.List()
	if err != nil {
		fmt.Fprintln(stderr, "proxmox-safe-mcp grants: "+err.Error())
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CODE\tSTATUS\tEXPIRES\tCLUSTER\tACTION\tTARGET\tOPERATOR")
	now := time.Now()
	for _, g := range grants {
		status := string(g.Status)
		if now.After(g.Expires) && (g.Status == grant.Pending || g.Status == grant.Approved) {
			status += " (expired)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Code, status, g.Expires.Local().Format(grant.TimeFormat),
			orUnknown(g.Cluster.String()), g.Action, g.TargetLabel(), g.Operator)
	}
	if err := tw.Flush(); err != nil {
		return exitUsage
	}
	return exitOK
}

// isHelpFlag reports whether arg asks for a command's usage.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help"
}

// operatorName is the login name of the user deciding, for the audit log.
func operatorName(lookup func(string) (string, bool)) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if v, ok := lookup("USER"); ok && v != "" {
		return v
	}
	return "unknown"
}

// grantStore opens the server's grant store: PROXMOX_SAFE_GRANT_DIR, else
// "grants" beside the audit log (for the demo, its own directory or a
// private temporary one: see internal/demo).
func grantStore(c *settings.Config) (*grant.Store, error) {
	dir := serverGrantDir(c)
	if dir == "" {
		return nil, errors.New("the grant level needs a grant directory: set PROXMOX_SAFE_GRANT_DIR or PROXMOX_SAFE_AUDIT_LOG")
	}
	var opts *grant.Options
	if c.Demo {
		opts = &grant.Options{Command: demo.ApproveCommand(c)}
	}
	return grant.Open(dir, opts)
}

// serverGrantDir is the grant directory of the server; "" when there is
// none to derive.
func serverGrantDir(c *settings.Config) string {
	if c.Demo {
		return c.GrantDir
	}
	return grantDirFor(c.GrantDir, c.AuditLog)
}
